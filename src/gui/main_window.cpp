#include "main_window.hpp"

#include "accessible.hpp"

#include <ctime>
#include <gdkmm/display.h>
#include <glibmm/main.h>
#include <glibmm/markup.h>
#include <gtkmm/cssprovider.h>
#include <gtkmm/stylecontext.h>

namespace tracectl::gui {
namespace {

std::uint64_t monotonic_us() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000U +
           static_cast<std::uint64_t>(now.tv_nsec) / 1'000U;
}

constexpr const char* css = R"(
.tracectl-banner { background-color: #c01c28; padding: 8px 12px; }
.tracectl-banner-text { color: white; }
.tracectl-message { background-color: #fdf0d5; padding: 6px 12px; }
)";

/// "Starting", "Stopping", "Destroying".
const char* progress_verb(SessionAction action) {
    switch (action) {
    case SessionAction::start:
        return "Starting";
    case SessionAction::stop:
        return "Stopping";
    case SessionAction::destroy:
        break;
    }
    return "Destroying";
}

/// "start", "stop", "destroy".
const char* verb(SessionAction action) {
    switch (action) {
    case SessionAction::start:
        return "start";
    case SessionAction::stop:
        return "stop";
    case SessionAction::destroy:
        break;
    }
    return "destroy";
}

std::string quoted(const std::string& name) {
    return "“" + name + "”";
}

} // namespace

MainWindow::MainWindow(const BusChoice& bus)
    : layout_(Gtk::Orientation::VERTICAL), banner_(Gtk::Orientation::HORIZONTAL, 12),
      retry_("Retry"), message_bar_(Gtk::Orientation::HORIZONTAL, 12), dismiss_("Dismiss"),
      toolbar_(Gtk::Orientation::HORIZONTAL, 6), new_session_("New Session…"), start_("Start"),
      stop_("Stop"), destroy_("Destroy") {
    set_title("Tracing Sessions");
    header_.set_title_widget(title_);
    title_.set_markup("<b>Tracing Sessions</b>");
    set_titlebar(header_);
    set_default_size(1100, 480);

    auto provider = Gtk::CssProvider::create();
    provider->load_from_data(css);
    Gtk::StyleContext::add_provider_for_display(get_display(), provider,
                                                GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);

    // The banner: the daemon (or the bus) is not there.
    auto* banner_text = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 2);
    banner_title_.add_css_class("tracectl-banner-text");
    banner_detail_.add_css_class("tracectl-banner-text");
    banner_title_.set_xalign(0.0F);
    banner_detail_.set_xalign(0.0F);
    banner_detail_.set_wrap(true);
    // Not selectable: a selectable label takes the focus of a window that opens with the banner
    // (no sensitive button yet) and shows itself selected.
    banner_text->append(banner_title_);
    banner_text->append(banner_detail_);
    banner_text->set_hexpand(true);
    banner_.append(*banner_text);
    retry_.set_valign(Gtk::Align::CENTER);
    retry_.signal_clicked().connect([this] {
        if (client_) {
            client_->reload();
        }
    });
    banner_.append(retry_);
    banner_.add_css_class("tracectl-banner");
    set_accessible_label(banner_, "Daemon status");
    banner_.set_visible(false);
    layout_.append(banner_);

    // The message bar: what the daemon answered to the last refused action.
    message_.set_xalign(0.0F);
    message_.set_wrap(true);
    message_.set_selectable(true);
    message_.set_hexpand(true);
    set_accessible_description(message_, "Message");
    dismiss_.set_valign(Gtk::Align::CENTER);
    dismiss_.signal_clicked().connect([this] { message_bar_.set_visible(false); });
    message_bar_.append(message_);
    message_bar_.append(dismiss_);
    message_bar_.add_css_class("tracectl-message");
    message_bar_.set_visible(false);
    layout_.append(message_bar_);

    toolbar_.set_margin(6);
    new_session_.signal_clicked().connect([this] {
        if (dialog_) {
            dialog_->open();
        }
    });
    start_.signal_clicked().connect([this] { on_action(SessionAction::start); });
    stop_.signal_clicked().connect([this] { on_action(SessionAction::stop); });
    destroy_.signal_clicked().connect([this] { on_action(SessionAction::destroy); });
    // No mnemonics on buttons: GTK 4.8 names a button with a mnemonic (or an accessible
    // label) by both its label as written and its text ("_Start Start"); plain labels give
    // plain names.
    toolbar_.append(new_session_);
    toolbar_.append(start_);
    toolbar_.append(stop_);
    toolbar_.append(destroy_);
    status_.set_hexpand(true);
    status_.set_xalign(1.0F);
    set_accessible_description(status_, "Status");
    toolbar_.append(status_);
    layout_.append(toolbar_);

    view_.signal_selection_changed().connect(sigc::mem_fun(*this, &MainWindow::update_actions));
    layout_.append(view_);
    details_.set_xalign(0.0F);
    details_.set_wrap(true);
    details_.set_selectable(true);
    details_.set_margin(6);
    set_accessible_description(details_, "Selected session");
    layout_.append(details_);
    set_child(layout_);

    dialog_.emplace(*this);
    dialog_->signal_create().connect(sigc::mem_fun(*this, &MainWindow::on_create));

    DaemonEvents events;
    events.presence = [this](bool present, const std::string& reason) {
        on_presence(present, reason);
    };
    events.session = [this](const std::string& path, const cli::PropertyMap& properties) {
        model_.update(path, properties);
        schedule_refresh();
    };
    events.session_removed = [this](const std::string& path) {
        model_.remove(path);
        schedule_refresh();
    };
    events.sessions_cleared = [this] {
        model_.clear();
        schedule_refresh();
    };
    events.bus_lost = [this](const std::string& reason) { on_bus_lost(reason); };
    try {
        client_ = std::make_unique<DaemonClient>(bus, std::move(events));
    } catch (const sdbus::Error& e) {
        show_banner("Cannot connect to the bus", e.getMessage(), false);
    }
    // Rates fall to 0 when the daemon stops announcing figures (it only announces changes):
    // redraw once a second to show that. This reads nothing from the bus.
    tick_ = Glib::signal_timeout().connect_seconds(
        [this] {
            refresh();
            return true;
        },
        1);
    update_actions();
}

MainWindow::~MainWindow() {
    tick_.disconnect();
    refresh_idle_.disconnect();
    client_.reset(); // its callbacks point at this window
}

void MainWindow::show_banner(const std::string& title, const std::string& detail, bool can_retry) {
    banner_title_.set_markup("<b>" + Glib::Markup::escape_text(title) + "</b>");
    banner_detail_.set_text(detail);
    banner_detail_.set_visible(!detail.empty());
    retry_.set_visible(can_retry);
    banner_.set_visible(true);
}

void MainWindow::show_message(const std::string& text) {
    message_.set_text(text);
    message_bar_.set_visible(true);
}

void MainWindow::on_presence(bool present, const std::string& reason) {
    daemon_present_ = present;
    if (present) {
        banner_.set_visible(false);
    } else {
        busy_.clear();
        status_.set_text("");
        show_banner("tracectld is not running",
                    reason.empty() ? "Its sessions show again as soon as it is back." : reason,
                    true);
    }
    update_actions();
}

void MainWindow::on_bus_lost(const std::string& reason) {
    daemon_present_ = false;
    model_.clear();
    schedule_refresh();
    show_banner("Lost the connection to the bus", reason, false);
    // The client can do nothing more; drop it once its dispatch has returned.
    Glib::signal_idle().connect_once([this] {
        client_.reset();
        update_actions();
    });
}

void MainWindow::on_create(const CreateRequest& request) {
    if (!client_) {
        dialog_->show_error("Could not create the session", "There is no connection to the bus.");
        return;
    }
    dialog_->set_busy(true);
    const std::string name = request.name;
    client_->create_session(
        request.name, create_options(request),
        [this, name](const std::string& path, const std::optional<CallError>& error) {
            dialog_->set_busy(false);
            if (error) {
                dialog_->show_error("Could not create session " + quoted(name), error->message);
                return;
            }
            dialog_->set_visible(false);
            select_when_seen_ = path;
            status_.set_text("Created session " + quoted(name));
            schedule_refresh();
        });
}

void MainWindow::on_action(SessionAction action) {
    const std::optional<SessionRow> row = view_.selected();
    if (!client_ || !row || busy_.contains(row->path)) {
        return;
    }
    busy_.insert(row->path);
    message_bar_.set_visible(false);
    status_.set_text(std::string(progress_verb(action)) + " " + quoted(row->name) + "…");
    update_actions();
    const std::string path = row->path;
    const std::string name = row->name;
    client_->act(action, path, [this, action, path, name](const std::optional<CallError>& error) {
        busy_.erase(path);
        if (error) {
            status_.set_text("");
            show_message("Could not " + std::string(verb(action)) + " session " + quoted(name) +
                         ": " + error->message);
        } else {
            status_.set_text(std::string(progress_verb(action)) + " " + quoted(name) + ": done");
        }
        update_actions();
    });
}

void MainWindow::schedule_refresh() {
    if (!refresh_idle_.connected()) {
        refresh_idle_ = Glib::signal_idle().connect([this] {
            refresh();
            return false;
        });
    }
}

void MainWindow::refresh() {
    view_.show_rows(model_.rows(monotonic_us()));
    if (!select_when_seen_.empty() && model_.contains(select_when_seen_)) {
        view_.select(select_when_seen_);
        select_when_seen_.clear();
    }
    update_actions();
}

void MainWindow::update_actions() {
    const std::optional<SessionRow> row = view_.selected();
    std::string details;
    if (row) {
        details = quoted(row->name) + ": " + row->state + ", " + row->mode + " mode, output " +
                  row->output;
        if (!row->error_reason.empty()) {
            details += "\nError: " + row->error_reason;
        }
    }
    if (details_.get_text().raw() != details) {
        details_.set_text(details);
    }
    const bool can_act = client_ && daemon_present_ && row && !busy_.contains(row->path);
    start_.set_sensitive(can_act);
    stop_.set_sensitive(can_act);
    destroy_.set_sensitive(can_act);
    new_session_.set_sensitive(client_ != nullptr);
}

} // namespace tracectl::gui
