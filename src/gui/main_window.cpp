#include "main_window.hpp"

#include "accessible.hpp"
#include "quoted.hpp"

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

} // namespace

MainWindow::MainWindow(const BusChoice& bus)
    : layout_(Gtk::Orientation::VERTICAL), banner_(Gtk::Orientation::HORIZONTAL, 12),
      retry_("Retry"), message_bar_(Gtk::Orientation::HORIZONTAL, 12), dismiss_("Dismiss"),
      toolbar_(Gtk::Orientation::HORIZONTAL, 6), new_session_("New Session…"), start_("Start"),
      stop_("Stop"), rotate_("Rotate"), snapshot_("Snapshot"), destroy_("Destroy"),
      paned_(Gtk::Orientation::HORIZONTAL), sessions_side_(Gtk::Orientation::VERTICAL),
      result_bar_(Gtk::Orientation::HORIZONTAL, 6), open_folder_("Open folder") {
    set_title("Tracing Sessions");
    header_.set_title_widget(title_);
    title_.set_markup("<b>Tracing Sessions</b>");
    set_titlebar(header_);
    set_default_size(1240, 700);

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
    rotate_.signal_clicked().connect(sigc::mem_fun(*this, &MainWindow::on_rotate));
    snapshot_.signal_clicked().connect(sigc::mem_fun(*this, &MainWindow::on_snapshot));
    // No mnemonics on buttons: GTK 4.8 names a button with a mnemonic (or an accessible
    // label) by both its label as written and its text ("_Start Start"); plain labels give
    // plain names.
    toolbar_.append(new_session_);
    toolbar_.append(start_);
    toolbar_.append(stop_);
    toolbar_.append(rotate_);
    toolbar_.append(snapshot_);
    toolbar_.append(destroy_);
    spinner_.set_hexpand(true);
    spinner_.set_halign(Gtk::Align::END);
    set_accessible_label(spinner_, "Working");
    toolbar_.append(spinner_);
    status_.set_xalign(1.0F);
    status_.set_ellipsize(Pango::EllipsizeMode::START); // a long path must not widen the window
    status_.set_width_chars(20);
    set_accessible_description(status_, "Status");
    toolbar_.append(status_);
    layout_.append(toolbar_);

    view_.signal_selection_changed().connect(sigc::mem_fun(*this, &MainWindow::update_actions));
    sessions_side_.append(view_);
    details_.set_xalign(0.0F);
    details_.set_wrap(true);
    details_.set_selectable(true);
    details_.set_margin(6);
    set_accessible_description(details_, "Selected session");
    sessions_side_.append(details_);
    // The last folder the daemon wrote for us: an archive or a snapshot.
    result_.set_xalign(0.0F);
    result_.set_hexpand(true);
    result_.set_wrap(true);
    result_.set_selectable(true);
    set_accessible_description(result_, "Result");
    open_folder_.signal_clicked().connect(sigc::mem_fun(*this, &MainWindow::open_result_folder));
    result_bar_.set_margin(6);
    result_bar_.append(result_);
    result_bar_.append(open_folder_);
    result_bar_.set_visible(false);
    sessions_side_.append(result_bar_);
    sessions_side_.set_hexpand(true);
    paned_.set_start_child(sessions_side_);
    paned_.set_resize_start_child(true);
    paned_.set_shrink_start_child(false);
    event_tree_.set_size_request(320, -1);
    paned_.set_end_child(event_tree_);
    paned_.set_resize_end_child(false);
    paned_.set_shrink_end_child(false);
    paned_.set_vexpand(true);
    layout_.append(paned_);
    set_child(layout_);

    event_tree_.signal_toggled().connect(sigc::mem_fun(*this, &MainWindow::on_tracepoint_toggled));
    event_tree_.signal_rule().connect(sigc::mem_fun(*this, &MainWindow::on_rule));
    event_tree_.signal_kernel_wanted().connect([this] {
        if (!client_) {
            return;
        }
        client_->list_kernel_tracepoints([this](const std::vector<KernelTracepoint>& tracepoints,
                                                const std::optional<CallError>& error) {
            event_tree_.show_kernel(tracepoints, error);
        });
    });

    dialog_.emplace(*this);
    dialog_->signal_create().connect(sigc::mem_fun(*this, &MainWindow::on_create));
    dialog_->signal_name_changed().connect([this](const std::string& name) {
        if (!client_ || name.empty()) {
            dialog_->show_default_output(name, {});
            return;
        }
        client_->default_output_path(
            name, [this, name](const std::string& path, const std::optional<CallError>&) {
                dialog_->show_default_output(name, path); // "" on an error: nothing to show
            });
    });

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
    events.application = [this](const ApplicationInfo& application) {
        event_tree_.show_application(application);
    };
    events.application_removed = [this](const std::string& path) {
        event_tree_.remove_application(path);
    };
    events.applications_cleared = [this] {
        event_tree_.clear_applications();
        event_tree_.clear_kernel();
    };
    events.chunk = [this](const std::string& session, ChunkEvent event, const std::string& path,
                          const std::string& reason) { on_chunk(session, event, path, reason); };
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
        rotations_.clear();
        spinner_.stop();
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
    rotate_.set_sensitive(can_act);
    snapshot_.set_sensitive(can_act);
    destroy_.set_sensitive(can_act);
    update_event_tree(row);
    new_session_.set_sensitive(client_ != nullptr);
}

} // namespace tracectl::gui
