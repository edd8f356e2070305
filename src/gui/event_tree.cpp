#include "event_tree.hpp"

#include "accessible.hpp"
#include "quoted.hpp"

#include <algorithm>
#include <glibmm/markup.h>

namespace tracectl::gui {
namespace {

constexpr const char* kKernelOwnerPrefix = "kernel:";

Gtk::Label& addCaption(Gtk::Grid& grid, const char* text, int row) {
    auto* label = Gtk::make_managed<Gtk::Label>(text);
    label->set_xalign(1.0F);
    grid.attach(*label, 0, row);
    return *label;
}

} // namespace

EventTree::EventTree()
    : Gtk::Box(Gtk::Orientation::VERTICAL, 6), content_(Gtk::Orientation::VERTICAL, 4),
      applicationsExpander_("Applications"), applicationsBox_(Gtk::Orientation::VERTICAL, 2),
      kernelExpander_("Kernel tracepoints"), kernelBox_(Gtk::Orientation::VERTICAL, 2),
      ustChoice_("User space"), kernelChoice_("Kernel"), enableRule_("Enable rule") {
    set_margin(6);
    sessionLabel_.set_xalign(0.0F);
    sessionLabel_.set_wrap(true);
    setAccessibleDescription(sessionLabel_, "Event tree session");
    append(sessionLabel_);

    noApplications_.set_text("No application registered.");
    noApplications_.set_xalign(0.0F);
    noApplications_.set_margin_start(18);
    applicationsBox_.append(noApplications_);
    applicationsExpander_.set_child(applicationsBox_);
    applicationsExpander_.set_expanded(true);
    setAccessibleLabel(applicationsExpander_, "Applications");
    content_.append(applicationsExpander_);

    kernelStatus_.set_xalign(0.0F);
    kernelStatus_.set_wrap(true);
    kernelStatus_.set_margin_start(18);
    kernelBox_.append(kernelStatus_);
    kernelExpander_.set_child(kernelBox_);
    setAccessibleLabel(kernelExpander_, "Kernel tracepoints");
    kernelExpander_.property_expanded().signal_changed().connect([this] {
        if (kernelExpander_.get_expanded() && !kernelAsked_) {
            kernelAsked_ = true;
            kernelStatus_.set_text("Listing the kernel's tracepoints…");
            kernelStatus_.set_visible(true);
            kernelWanted_.emit();
        }
    });
    content_.append(kernelExpander_);

    scroller_.set_child(content_);
    scroller_.set_vexpand(true);
    scroller_.set_policy(Gtk::PolicyType::NEVER, Gtk::PolicyType::AUTOMATIC);
    append(scroller_);

    // A rule by pattern: what lttng enable-event takes.
    ruleGrid_.set_row_spacing(4);
    ruleGrid_.set_column_spacing(6);
    addCaption(ruleGrid_, "Pattern", 0);
    pattern_.set_placeholder_text("provider:*, system:event");
    setAccessibleLabel(pattern_, "Pattern");
    pattern_.set_hexpand(true);
    pattern_.set_width_chars(12);
    loglevel_.set_width_chars(12);
    filter_.set_width_chars(12);
    ruleGrid_.attach(pattern_, 1, 0);
    addCaption(ruleGrid_, "Log level", 1);
    loglevel_.set_placeholder_text("any, TRACE_WARNING, 0-14");
    loglevel_.set_tooltip_text("Records this log level and the more severe ones (UST only)");
    setAccessibleLabel(loglevel_, "Log level");
    ruleGrid_.attach(loglevel_, 1, 1);
    addCaption(ruleGrid_, "Filter", 2);
    filter_.set_placeholder_text("none, e.g. intfield > 3");
    filter_.set_tooltip_text("An LTTng filter expression, e.g. "
                             "intfield > 3 && $ctx.procname == \"app*\"");
    setAccessibleLabel(filter_, "Filter");
    ruleGrid_.attach(filter_, 1, 2);
    auto* domains = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::HORIZONTAL, 6);
    ustChoice_.set_active(true);
    kernelChoice_.set_group(ustChoice_);
    domains->append(ustChoice_);
    domains->append(kernelChoice_);
    auto* spacer = Gtk::make_managed<Gtk::Box>();
    spacer->set_hexpand(true);
    domains->append(*spacer);
    enableRule_.signal_clicked().connect([this] {
        rule_.emit(kernelChoice_.get_active() ? kKernelDomain : kUstDomain, pattern_.get_text(),
                   RuleOptions{loglevel_.get_text(), filter_.get_text()});
    });
    domains->append(enableRule_);
    ruleGrid_.attach(*domains, 1, 3);
    append(ruleGrid_);

    showSession({}, {}, {});
}

void EventTree::makeCheck(Gtk::Box& box, const std::string& owner, const std::string& domain,
                          const std::string& pattern, const std::string& tooltip) {
    auto* row = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::HORIZONTAL, 6);
    row->set_margin_start(18);
    row->set_margin_top(1);
    row->set_margin_bottom(1);
    auto* check = Gtk::make_managed<Gtk::Switch>();
    check->set_valign(Gtk::Align::CENTER);
    setAccessibleLabel(*check, pattern);
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

void EventTree::dropChecksOf(const std::string& owner) {
    std::erase_if(checks_, [&](const Check& check) { return check.owner == owner; });
}

void EventTree::showApplication(const ApplicationInfo& application) {
    removeApplication(application.path);
    const std::string title = application.name + " (pid " + std::to_string(application.pid) + ")";
    auto* expander = Gtk::make_managed<Gtk::Expander>(title);
    setAccessibleLabel(*expander, "Application " + title);
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
        auto* providerExpander = Gtk::make_managed<Gtk::Expander>(provider);
        setAccessibleLabel(*providerExpander, "Provider " + provider);
        providerExpander->set_margin_start(12);
        providerExpander->set_expanded(provider.rfind("lttng_ust_", 0) != 0);
        auto* providerBox = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 0);
        for (const Tracepoint& tracepoint : tracepoints) {
            makeCheck(*providerBox, application.path, kUstDomain, tracepoint.name,
                      "log level " + std::to_string(tracepoint.loglevel));
        }
        providerExpander->set_child(*providerBox);
        box->append(*providerExpander);
    }
    expander->set_child(*box);
    applicationsBox_.append(*expander);
    applications_.emplace(application.path, node);
    noApplications_.set_visible(false);
    applyRules();
}

void EventTree::removeApplication(const std::string& path) {
    const auto it = applications_.find(path);
    if (it == applications_.end()) {
        return;
    }
    dropChecksOf(path);
    applicationsBox_.remove(*it->second.expander); // managed: destroyed with its removal
    applications_.erase(it);
    noApplications_.set_visible(applications_.empty());
}

void EventTree::clearApplications() {
    while (!applications_.empty()) {
        removeApplication(applications_.begin()->first);
    }
}

void EventTree::clearKernel() {
    for (const auto& [system, tracepoints] : kernelSystems_) {
        dropChecksOf(kKernelOwnerPrefix + system);
    }
    kernelSystems_.clear();
    while (Gtk::Widget* child = kernelBox_.get_last_child()) {
        if (child == &kernelStatus_) {
            break;
        }
        kernelBox_.remove(*child);
    }
    kernelStatus_.set_text("");
    kernelAsked_ = false;
    kernelExpander_.set_expanded(false);
}

void EventTree::showKernel(const std::vector<KernelTracepoint>& tracepoints,
                           const std::optional<CallError>& error) {
    clearKernel();
    kernelAsked_ = true;
    kernelExpander_.set_expanded(true);
    if (error) {
        kernelStatus_.set_text(error->message);
        setAccessibleDescription(kernelStatus_, "Kernel tracepoints error");
        kernelAsked_ = false; // asked again at the next expansion
        return;
    }
    setAccessibleDescription(kernelStatus_, "Kernel tracepoints status");
    for (const KernelTracepoint& tracepoint : tracepoints) {
        kernelSystems_[tracepoint.system].push_back(tracepoint);
    }
    kernelStatus_.set_text(std::to_string(tracepoints.size()) + " tracepoints in " +
                           std::to_string(kernelSystems_.size()) + " systems");
    for (const auto& [system, events] : kernelSystems_) {
        const std::string title = system + " (" + std::to_string(events.size()) + ")";
        auto* expander = Gtk::make_managed<Gtk::Expander>(title);
        setAccessibleLabel(*expander, "Kernel system " + system);
        expander->set_margin_start(12);
        auto* box = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 0);
        expander->set_child(*box);
        // Thousands of check boxes would slow the window down: a system's come when it opens.
        expander->property_expanded().signal_changed().connect(
            [this, expander, box, name = system] {
                if (expander->get_expanded() && box->get_first_child() == nullptr) {
                    fillSystem(*box, name);
                }
            });
        kernelBox_.append(*expander);
    }
}

void EventTree::fillSystem(Gtk::Box& box, const std::string& system) {
    const auto it = kernelSystems_.find(system);
    if (it == kernelSystems_.end()) {
        return;
    }
    for (const KernelTracepoint& tracepoint : it->second) {
        makeCheck(box, kKernelOwnerPrefix + system, kKernelDomain,
                  tracepoint.system + ":" + tracepoint.event, {});
    }
    applyRules();
}

void EventTree::showSession(const std::string& name, const std::map<std::string, std::string>& ust,
                            const std::map<std::string, std::string>& kernel) {
    if (name.empty()) {
        sessionLabel_.set_text("Select a session to choose its events.");
    } else {
        sessionLabel_.set_text("Events of " + quoted(name));
    }
    session_ = name;
    ustRules_ = ust;
    kernelRules_ = kernel;
    ruleGrid_.set_sensitive(!name.empty());
    applyRules();
}

void EventTree::applyRules() {
    applying_ = true;
    for (const Check& check : checks_) {
        const auto& rules = check.domain == kKernelDomain ? kernelRules_ : ustRules_;
        const bool active = rules.contains(check.pattern);
        if (check.button->get_active() != active) {
            check.button->set_active(active);
        }
        check.button->set_sensitive(!session_.empty());
    }
    applying_ = false;
}

} // namespace tracectl::gui
