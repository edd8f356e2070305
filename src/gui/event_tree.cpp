#include "event_tree.hpp"

#include "accessible.hpp"
#include "quoted.hpp"

#include <algorithm>
#include <glibmm/markup.h>

namespace tracectl::gui {
namespace {

constexpr const char* kernel_owner_prefix = "kernel:";

Gtk::Label& add_caption(Gtk::Grid& grid, const char* text, int row) {
    auto* label = Gtk::make_managed<Gtk::Label>(text);
    label->set_xalign(1.0F);
    grid.attach(*label, 0, row);
    return *label;
}

} // namespace

EventTree::EventTree()
    : Gtk::Box(Gtk::Orientation::VERTICAL, 6), content_(Gtk::Orientation::VERTICAL, 4),
      applications_expander_("Applications"), applications_box_(Gtk::Orientation::VERTICAL, 2),
      kernel_expander_("Kernel tracepoints"), kernel_box_(Gtk::Orientation::VERTICAL, 2),
      ust_choice_("User space"), kernel_choice_("Kernel"), enable_rule_("Enable rule") {
    set_margin(6);
    session_label_.set_xalign(0.0F);
    session_label_.set_wrap(true);
    set_accessible_description(session_label_, "Event tree session");
    append(session_label_);

    no_applications_.set_text("No application registered.");
    no_applications_.set_xalign(0.0F);
    no_applications_.set_margin_start(18);
    applications_box_.append(no_applications_);
    applications_expander_.set_child(applications_box_);
    applications_expander_.set_expanded(true);
    set_accessible_label(applications_expander_, "Applications");
    content_.append(applications_expander_);

    kernel_status_.set_xalign(0.0F);
    kernel_status_.set_wrap(true);
    kernel_status_.set_margin_start(18);
    kernel_box_.append(kernel_status_);
    kernel_expander_.set_child(kernel_box_);
    set_accessible_label(kernel_expander_, "Kernel tracepoints");
    kernel_expander_.property_expanded().signal_changed().connect([this] {
        if (kernel_expander_.get_expanded() && !kernel_asked_) {
            kernel_asked_ = true;
            kernel_status_.set_text("Listing the kernel's tracepoints…");
            kernel_status_.set_visible(true);
            kernel_wanted_.emit();
        }
    });
    content_.append(kernel_expander_);

    scroller_.set_child(content_);
    scroller_.set_vexpand(true);
    scroller_.set_policy(Gtk::PolicyType::NEVER, Gtk::PolicyType::AUTOMATIC);
    append(scroller_);

    // A rule by pattern: what lttng enable-event takes.
    rule_grid_.set_row_spacing(4);
    rule_grid_.set_column_spacing(6);
    add_caption(rule_grid_, "Pattern", 0);
    pattern_.set_placeholder_text("provider:*, system:event");
    set_accessible_label(pattern_, "Pattern");
    pattern_.set_hexpand(true);
    pattern_.set_width_chars(12);
    loglevel_.set_width_chars(12);
    filter_.set_width_chars(12);
    rule_grid_.attach(pattern_, 1, 0);
    add_caption(rule_grid_, "Log level", 1);
    loglevel_.set_placeholder_text("any, TRACE_WARNING, 0-14");
    loglevel_.set_tooltip_text("Records this log level and the more severe ones (UST only)");
    set_accessible_label(loglevel_, "Log level");
    rule_grid_.attach(loglevel_, 1, 1);
    add_caption(rule_grid_, "Filter", 2);
    filter_.set_placeholder_text("none, e.g. intfield > 3");
    filter_.set_tooltip_text("An LTTng filter expression, e.g. "
                             "intfield > 3 && $ctx.procname == \"app*\"");
    set_accessible_label(filter_, "Filter");
    rule_grid_.attach(filter_, 1, 2);
    auto* domains = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::HORIZONTAL, 6);
    ust_choice_.set_active(true);
    kernel_choice_.set_group(ust_choice_);
    domains->append(ust_choice_);
    domains->append(kernel_choice_);
    auto* spacer = Gtk::make_managed<Gtk::Box>();
    spacer->set_hexpand(true);
    domains->append(*spacer);
    enable_rule_.signal_clicked().connect([this] {
        rule_.emit(kernel_choice_.get_active() ? kernel_domain : ust_domain, pattern_.get_text(),
                   RuleOptions{loglevel_.get_text(), filter_.get_text()});
    });
    domains->append(enable_rule_);
    rule_grid_.attach(*domains, 1, 3);
    append(rule_grid_);

    show_session({}, {}, {});
}

void EventTree::make_check(Gtk::Box& box, const std::string& owner, const std::string& domain,
                           const std::string& pattern, const std::string& tooltip) {
    auto* row = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::HORIZONTAL, 6);
    row->set_margin_start(18);
    row->set_margin_top(1);
    row->set_margin_bottom(1);
    auto* check = Gtk::make_managed<Gtk::Switch>();
    check->set_valign(Gtk::Align::CENTER);
    set_accessible_label(*check, pattern);
    auto* label = Gtk::make_managed<Gtk::Label>(pattern);
    label->set_xalign(0.0F);
    label->set_ellipsize(Pango::EllipsizeMode::MIDDLE);
    label->set_hexpand(true);
    if (!tooltip.empty()) {
        row->set_tooltip_text(tooltip);
    }
    check->property_active().signal_changed().connect([this, check, domain, pattern] {
        if (!applying_) {
            toggled_.emit(domain, pattern, check->get_active());
        }
    });
    row->append(*check);
    row->append(*label);
    box.append(*row);
    checks_.push_back(Check{owner, domain, pattern, check});
}

void EventTree::drop_checks_of(const std::string& owner) {
    std::erase_if(checks_, [&](const Check& check) { return check.owner == owner; });
}

void EventTree::show_application(const ApplicationInfo& application) {
    remove_application(application.path);
    const std::string title = application.name + " (pid " + std::to_string(application.pid) + ")";
    auto* expander = Gtk::make_managed<Gtk::Expander>(title);
    set_accessible_label(*expander, "Application " + title);
    expander->set_expanded(true);
    expander->set_margin_start(12);
    auto* box = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 0);
    ApplicationNode node{expander, {}};
    if (application.error) {
        auto* error = Gtk::make_managed<Gtk::Label>(application.error->message);
        error->set_xalign(0.0F);
        error->set_wrap(true);
        error->set_margin_start(18);
        box->append(*error);
    } else if (application.tracepoints.empty()) {
        auto* none = Gtk::make_managed<Gtk::Label>("No tracepoint (yet).");
        none->set_xalign(0.0F);
        none->set_margin_start(18);
        box->append(*none);
    }
    // By provider, sorted; lttng-ust's own providers (lttng_ust_*) start folded.
    std::map<std::string, std::vector<Tracepoint>> providers;
    for (const Tracepoint& tracepoint : application.tracepoints) {
        providers[tracepoint.name.substr(0, tracepoint.name.find(':'))].push_back(tracepoint);
    }
    for (auto& [provider, tracepoints] : providers) {
        std::sort(tracepoints.begin(), tracepoints.end(),
                  [](const Tracepoint& a, const Tracepoint& b) { return a.name < b.name; });
        auto* provider_expander = Gtk::make_managed<Gtk::Expander>(provider);
        set_accessible_label(*provider_expander, "Provider " + provider);
        provider_expander->set_margin_start(12);
        provider_expander->set_expanded(provider.rfind("lttng_ust_", 0) != 0);
        auto* provider_box = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 0);
        for (const Tracepoint& tracepoint : tracepoints) {
            make_check(*provider_box, application.path, ust_domain, tracepoint.name,
                       "log level " + std::to_string(tracepoint.loglevel));
        }
        provider_expander->set_child(*provider_box);
        box->append(*provider_expander);
    }
    expander->set_child(*box);
    applications_box_.append(*expander);
    applications_.emplace(application.path, node);
    no_applications_.set_visible(false);
    apply_rules();
}

void EventTree::remove_application(const std::string& path) {
    const auto it = applications_.find(path);
    if (it == applications_.end()) {
        return;
    }
    drop_checks_of(path);
    applications_box_.remove(*it->second.expander); // managed: destroyed with its removal
    applications_.erase(it);
    no_applications_.set_visible(applications_.empty());
}

void EventTree::clear_applications() {
    while (!applications_.empty()) {
        remove_application(applications_.begin()->first);
    }
}

void EventTree::clear_kernel() {
    for (const auto& [system, tracepoints] : kernel_systems_) {
        drop_checks_of(kernel_owner_prefix + system);
    }
    kernel_systems_.clear();
    while (Gtk::Widget* child = kernel_box_.get_last_child()) {
        if (child == &kernel_status_) {
            break;
        }
        kernel_box_.remove(*child);
    }
    kernel_status_.set_text("");
    kernel_asked_ = false;
    kernel_expander_.set_expanded(false);
}

void EventTree::show_kernel(const std::vector<KernelTracepoint>& tracepoints,
                            const std::optional<CallError>& error) {
    clear_kernel();
    kernel_asked_ = true;
    kernel_expander_.set_expanded(true);
    if (error) {
        kernel_status_.set_text(error->message);
        set_accessible_description(kernel_status_, "Kernel tracepoints error");
        kernel_asked_ = false; // asked again at the next expansion
        return;
    }
    set_accessible_description(kernel_status_, "Kernel tracepoints status");
    for (const KernelTracepoint& tracepoint : tracepoints) {
        kernel_systems_[tracepoint.system].push_back(tracepoint);
    }
    kernel_status_.set_text(std::to_string(tracepoints.size()) + " tracepoints in " +
                            std::to_string(kernel_systems_.size()) + " systems");
    for (const auto& [system, events] : kernel_systems_) {
        const std::string title = system + " (" + std::to_string(events.size()) + ")";
        auto* expander = Gtk::make_managed<Gtk::Expander>(title);
        set_accessible_label(*expander, "Kernel system " + system);
        expander->set_margin_start(12);
        auto* box = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 0);
        expander->set_child(*box);
        // Thousands of check boxes would slow the window down: a system's come when it opens.
        expander->property_expanded().signal_changed().connect(
            [this, expander, box, name = system] {
                if (expander->get_expanded() && box->get_first_child() == nullptr) {
                    fill_system(*box, name);
                }
            });
        kernel_box_.append(*expander);
    }
}

void EventTree::fill_system(Gtk::Box& box, const std::string& system) {
    const auto it = kernel_systems_.find(system);
    if (it == kernel_systems_.end()) {
        return;
    }
    for (const KernelTracepoint& tracepoint : it->second) {
        make_check(box, kernel_owner_prefix + system, kernel_domain,
                   tracepoint.system + ":" + tracepoint.event, {});
    }
    apply_rules();
}

void EventTree::show_session(const std::string& name, const std::map<std::string, std::string>& ust,
                             const std::map<std::string, std::string>& kernel) {
    if (name.empty()) {
        session_label_.set_text("Select a session to choose its events.");
    } else {
        session_label_.set_text("Events of " + quoted(name));
    }
    session_ = name;
    ust_rules_ = ust;
    kernel_rules_ = kernel;
    rule_grid_.set_sensitive(!name.empty());
    apply_rules();
}

void EventTree::apply_rules() {
    applying_ = true;
    for (const Check& check : checks_) {
        const auto& rules = check.domain == kernel_domain ? kernel_rules_ : ust_rules_;
        const bool active = rules.contains(check.pattern);
        if (check.button->get_active() != active) {
            check.button->set_active(active);
        }
        check.button->set_sensitive(!session_.empty());
    }
    applying_ = false;
}

} // namespace tracectl::gui
