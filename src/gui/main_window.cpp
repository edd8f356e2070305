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

std::uint64_t monotonicUs() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000U +
           static_cast<std::uint64_t>(now.tv_nsec) / 1'000U;
}

constexpr const char* kCss = R"(
.tracectl-banner { background-color: #c01c28; padding: 8px 12px; }
.tracectl-banner-text { color: white; }
.tracectl-message { background-color: #fdf0d5; padding: 6px 12px; }
)";

} // namespace

MainWindow::MainWindow(const BusChoice& bus)
    : layout_(Gtk::Orientation::VERTICAL), banner_(Gtk::Orientation::HORIZONTAL, 12),
      retry_("Retry"), messageBar_(Gtk::Orientation::HORIZONTAL, 12), dismiss_("Dismiss"),
      toolbar_(Gtk::Orientation::HORIZONTAL, 6), newSession_("New Session…"), start_("Start"),
      stop_("Stop"), rotate_("Rotate"), snapshot_("Snapshot"), destroy_("Destroy"),
      paned_(Gtk::Orientation::HORIZONTAL), sessionsSide_(Gtk::Orientation::VERTICAL),
      resultBar_(Gtk::Orientation::HORIZONTAL, 6), openFolder_("Open folder") {
    set_title("Tracing Sessions");
    header_.set_title_widget(title_);
    title_.set_markup("<b>Tracing Sessions</b>");
    set_titlebar(header_);
    set_default_size(1240, 700);

    auto provider = Gtk::CssProvider::create();
    provider->load_from_data(kCss);
    Gtk::StyleContext::add_provider_for_display(get_display(), provider,
                                                GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);

    // The banner: the daemon (or the bus) is not there.
    auto* bannerText = Gtk::make_managed<Gtk::Box>(Gtk::Orientation::VERTICAL, 2);
    bannerTitle_.add_css_class("tracectl-banner-text");
    bannerDetail_.add_css_class("tracectl-banner-text");
    bannerTitle_.set_xalign(0.0F);
    bannerDetail_.set_xalign(0.0F);
    bannerDetail_.set_wrap(true);
    // Not selectable: a selectable label takes the focus of a window that opens with the banner
    // (no sensitive button yet) and shows itself selected.
    bannerText->append(bannerTitle_);
    bannerText->append(bannerDetail_);
    bannerText->set_hexpand(true);
    banner_.append(*bannerText);
    retry_.set_valign(Gtk::Align::CENTER);
    retry_.signal_clicked().connect([this] {
        if (client_) {
            client_->reload();
        }
    });
    banner_.append(retry_);
    banner_.add_css_class("tracectl-banner");
    setAccessibleLabel(banner_, "Daemon status");
    banner_.set_visible(false);
    layout_.append(banner_);

    // The message bar: what the daemon answered to the last refused action.
    message_.set_xalign(0.0F);
    message_.set_wrap(true);
    message_.set_selectable(true);
    message_.set_hexpand(true);
    setAccessibleDescription(message_, "Message");
    dismiss_.set_valign(Gtk::Align::CENTER);
    dismiss_.signal_clicked().connect([this] { messageBar_.set_visible(false); });
    messageBar_.append(message_);
    messageBar_.append(dismiss_);
    messageBar_.add_css_class("tracectl-message");
    messageBar_.set_visible(false);
    layout_.append(messageBar_);

    toolbar_.set_margin(6);
    newSession_.signal_clicked().connect([this] {
        if (dialog_) {
            dialog_->open();
        }
    });
    start_.signal_clicked().connect([this] { onAction(SessionAction::Start); });
    stop_.signal_clicked().connect([this] { onAction(SessionAction::Stop); });
    destroy_.signal_clicked().connect([this] { onAction(SessionAction::Destroy); });
    rotate_.signal_clicked().connect(sigc::mem_fun(*this, &MainWindow::onRotate));
    snapshot_.signal_clicked().connect(sigc::mem_fun(*this, &MainWindow::onSnapshot));
    // No mnemonics on buttons: GTK 4.8 names a button with a mnemonic (or an accessible
    // label) by both its label as written and its text ("_Start Start"); plain labels give
    // plain names.
    toolbar_.append(newSession_);
    toolbar_.append(start_);
    toolbar_.append(stop_);
    toolbar_.append(rotate_);
    toolbar_.append(snapshot_);
    toolbar_.append(destroy_);
    spinner_.set_hexpand(true);
    spinner_.set_halign(Gtk::Align::END);
    setAccessibleLabel(spinner_, "Working");
    toolbar_.append(spinner_);
    status_.set_xalign(1.0F);
    status_.set_ellipsize(Pango::EllipsizeMode::START); // a long path must not widen the window
    status_.set_width_chars(20);
    setAccessibleDescription(status_, "Status");
    toolbar_.append(status_);
    layout_.append(toolbar_);

    view_.signalSelectionChanged().connect(sigc::mem_fun(*this, &MainWindow::updateActions));
    sessionsSide_.append(view_);
    details_.set_xalign(0.0F);
    details_.set_wrap(true);
    details_.set_selectable(true);
    details_.set_margin(6);
    setAccessibleDescription(details_, "Selected session");
    sessionsSide_.append(details_);
    // The last folder the daemon wrote for us: an archive or a snapshot.
    result_.set_xalign(0.0F);
    result_.set_hexpand(true);
    result_.set_wrap(true);
    result_.set_selectable(true);
    setAccessibleDescription(result_, "Result");
    openFolder_.signal_clicked().connect(sigc::mem_fun(*this, &MainWindow::openResultFolder));
    resultBar_.set_margin(6);
    resultBar_.append(result_);
    resultBar_.append(openFolder_);
    resultBar_.set_visible(false);
    sessionsSide_.append(resultBar_);
    sessionsSide_.set_hexpand(true);
    paned_.set_start_child(sessionsSide_);
    paned_.set_resize_start_child(true);
    paned_.set_shrink_start_child(false);
    eventTree_.set_size_request(320, -1);
    paned_.set_end_child(eventTree_);
    paned_.set_resize_end_child(false);
    paned_.set_shrink_end_child(false);
    paned_.set_vexpand(true);
    layout_.append(paned_);
    set_child(layout_);

    eventTree_.signalToggled().connect(sigc::mem_fun(*this, &MainWindow::onTracepointToggled));
    eventTree_.signalRule().connect(sigc::mem_fun(*this, &MainWindow::onRule));
    eventTree_.signalKernelWanted().connect([this] {
        if (!client_) {
            return;
        }
        client_->listKernelTracepoints([this](const std::vector<KernelTracepoint>& tracepoints,
                                              const std::optional<CallError>& error) {
            eventTree_.showKernel(tracepoints, error);
        });
    });

    dialog_.emplace(*this);
    dialog_->signalCreate().connect(sigc::mem_fun(*this, &MainWindow::onCreate));
    dialog_->signalNameChanged().connect([this](const std::string& name) {
        if (!client_ || name.empty()) {
            dialog_->showDefaultOutput(name, {});
            return;
        }
        client_->defaultOutputPath(
            name, [this, name](const std::string& path, const std::optional<CallError>&) {
                dialog_->showDefaultOutput(name, path); // "" on an error: nothing to show
            });
    });

    DaemonEvents events;
    events.presence = [this](bool present, const std::string& reason) {
        onPresence(present, reason);
    };
    events.session = [this](const std::string& path, const cli::PropertyMap& properties) {
        model_.update(path, properties);
        scheduleRefresh();
    };
    events.sessionRemoved = [this](const std::string& path) {
        model_.remove(path);
        scheduleRefresh();
    };
    events.sessionsCleared = [this] {
        model_.clear();
        scheduleRefresh();
    };
    events.application = [this](const ApplicationInfo& application) {
        eventTree_.showApplication(application);
    };
    events.applicationRemoved = [this](const std::string& path) {
        eventTree_.removeApplication(path);
    };
    events.applicationsCleared = [this] {
        eventTree_.clearApplications();
        eventTree_.clearKernel();
    };
    events.chunk = [this](const std::string& session, ChunkEvent event, const std::string& path,
                          const std::string& reason) { onChunk(session, event, path, reason); };
    events.busLost = [this](const std::string& reason) { onBusLost(reason); };
    try {
        client_ = std::make_unique<DaemonClient>(bus, std::move(events));
    } catch (const sdbus::Error& e) {
        showBanner("Cannot connect to the bus", e.getMessage(), false);
    }
    // Rates fall to 0 when the daemon stops announcing figures (it only announces changes):
    // redraw once a second to show that. This reads nothing from the bus.
    tick_ = Glib::signal_timeout().connect_seconds(
        [this] {
            refresh();
            return true;
        },
        1);
    updateActions();
}

MainWindow::~MainWindow() {
    tick_.disconnect();
    refreshIdle_.disconnect();
    client_.reset(); // its callbacks point at this window
}

void MainWindow::showBanner(const std::string& title, const std::string& detail, bool canRetry) {
    bannerTitle_.set_markup("<b>" + Glib::Markup::escape_text(title) + "</b>");
    bannerDetail_.set_text(detail);
    bannerDetail_.set_visible(!detail.empty());
    retry_.set_visible(canRetry);
    banner_.set_visible(true);
}

void MainWindow::showMessage(const std::string& text) {
    message_.set_text(text);
    messageBar_.set_visible(true);
}

void MainWindow::onPresence(bool present, const std::string& reason) {
    daemonPresent_ = present;
    if (present) {
        banner_.set_visible(false);
    } else {
        busy_.clear();
        rotations_.clear();
        spinner_.stop();
        status_.set_text("");
        showBanner("tracectld is not running",
                   reason.empty() ? "Its sessions show again as soon as it is back." : reason,
                   true);
    }
    updateActions();
}

void MainWindow::onBusLost(const std::string& reason) {
    daemonPresent_ = false;
    model_.clear();
    scheduleRefresh();
    showBanner("Lost the connection to the bus", reason, false);
    // The client can do nothing more; drop it once its dispatch has returned.
    Glib::signal_idle().connect_once([this] {
        client_.reset();
        updateActions();
    });
}

void MainWindow::onCreate(const CreateRequest& request) {
    if (!client_) {
        dialog_->showError("Could not create the session", "There is no connection to the bus.");
        return;
    }
    dialog_->setBusy(true);
    const std::string name = request.name;
    client_->createSession(
        request.name, createOptions(request),
        [this, name](const std::string& path, const std::optional<CallError>& error) {
            dialog_->setBusy(false);
            if (error) {
                dialog_->showError("Could not create session " + quoted(name), error->message);
                return;
            }
            dialog_->set_visible(false);
            selectWhenSeen_ = path;
            status_.set_text("Created session " + quoted(name));
            scheduleRefresh();
        });
}

void MainWindow::scheduleRefresh() {
    if (!refreshIdle_.connected()) {
        refreshIdle_ = Glib::signal_idle().connect([this] {
            refresh();
            return false;
        });
    }
}

void MainWindow::refresh() {
    view_.showRows(model_.rows(monotonicUs()));
    if (!selectWhenSeen_.empty() && model_.contains(selectWhenSeen_)) {
        view_.select(selectWhenSeen_);
        selectWhenSeen_.clear();
    }
    updateActions();
}

void MainWindow::updateActions() {
    const std::optional<SessionRow> row = view_.selected();
    std::string details;
    if (row) {
        details = quoted(row->name) + ": " + row->state + ", " + row->mode + " mode, output " +
                  row->output;
        if (!row->errorReason.empty()) {
            details += "\nError: " + row->errorReason;
        }
    }
    if (details_.get_text().raw() != details) {
        details_.set_text(details);
    }
    const bool canAct = client_ && daemonPresent_ && row && !busy_.contains(row->path);
    start_.set_sensitive(canAct);
    stop_.set_sensitive(canAct);
    rotate_.set_sensitive(canAct);
    snapshot_.set_sensitive(canAct);
    destroy_.set_sensitive(canAct);
    updateEventTree(row);
    newSession_.set_sensitive(client_ != nullptr);
}

} // namespace tracectl::gui
