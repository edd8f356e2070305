// The main window: a banner when tracectld is not there, a message bar for refused actions,
// the toolbar (New Session…, Start, Stop, Rotate, Snapshot, Destroy, with a spinner while the
// daemon works), the sessions view with the selected session's details and the last archive or
// snapshot folder ("Open folder"), and beside them the event tree of the selected session. It wires
// the DaemonClient's events into the SessionsModel and the view; it decides nothing the daemon
// decides (which action is allowed in which state, which names are valid): it asks, and
// shows the answer. main_window.cpp lays it out and wires the daemon's events;
// main_window_actions.cpp holds the session actions and their results, main_window_events.cpp
// the event tree's requests.
#pragma once

#include "command_line.hpp"
#include "create_dialog.hpp"
#include "daemon_client.hpp"
#include "event_tree.hpp"
#include "sessions_model.hpp"
#include "sessions_view.hpp"

#include <gtkmm/applicationwindow.h>
#include <gtkmm/box.h>
#include <gtkmm/button.h>
#include <gtkmm/headerbar.h>
#include <gtkmm/label.h>
#include <gtkmm/paned.h>
#include <gtkmm/spinner.h>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sigc++/connection.h>
#include <string>

namespace tracectl::gui {

class MainWindow : public Gtk::ApplicationWindow {
public:
    /// Connects to tracectld on `bus`. A bus that cannot be reached is shown in the banner.
    explicit MainWindow(const BusChoice& bus);
    ~MainWindow() override;
    MainWindow(const MainWindow&) = delete;
    MainWindow& operator=(const MainWindow&) = delete;
    MainWindow(MainWindow&&) = delete;
    MainWindow& operator=(MainWindow&&) = delete;

private:
    void onPresence(bool present, const std::string& reason);
    void onBusLost(const std::string& reason);
    void onCreate(const CreateRequest& request);
    void onAction(SessionAction action);
    void onRotate();
    void onSnapshot();
    /// A Session signal: a rotation's archive is complete (or failed), a snapshot written.
    void onChunk(const std::string& session, ChunkEvent event, const std::string& path,
                 const std::string& reason);
    /// Shows `path` (a folder the daemon wrote) with "Open folder"; `what` says what it is.
    void showResult(const std::string& what, const std::string& path);
    void openResultFolder();
    void onTracepointToggled(const std::string& domain, const std::string& pattern, bool enable);
    void onRule(const std::string& domain, const std::string& pattern, const RuleOptions& options);
    /// Marks the session at `path` busy (buttons off, spinner on) or done.
    void setBusy(const std::string& path, bool busy);
    /// The selected session, now busy, with "<doing> <name>…" in the status line; nullopt (and
    /// nothing changed) if no session is selected, it is busy already, or no daemon is there.
    std::optional<SessionRow> beginAction(const std::string& doing);
    /// The selected session's name and rules, shown in the event tree when they changed.
    void updateEventTree(const std::optional<SessionRow>& row);
    /// Coalesces the model's changes into one redraw at the next idle turn.
    void scheduleRefresh();
    void refresh();
    void updateActions();
    void showBanner(const std::string& title, const std::string& detail, bool canRetry);
    void showMessage(const std::string& text);

    SessionsModel model_;
    std::unique_ptr<DaemonClient> client_;
    std::optional<CreateDialog> dialog_;

    Gtk::Box layout_;
    Gtk::Box banner_;
    Gtk::Label bannerTitle_;
    Gtk::Label bannerDetail_;
    Gtk::Button retry_;
    Gtk::Box messageBar_;
    Gtk::Label message_;
    Gtk::Button dismiss_;
    Gtk::Box toolbar_;
    Gtk::Button newSession_;
    Gtk::Button start_;
    Gtk::Button stop_;
    Gtk::Button rotate_;
    Gtk::Button snapshot_;
    Gtk::Button destroy_;
    Gtk::Spinner spinner_;
    Gtk::Label status_;
    Gtk::Paned paned_;
    Gtk::Box sessionsSide_;
    SessionsView view_;
    Gtk::Label details_; ///< the selected session: state, mode, output, error reason
    Gtk::Box resultBar_;
    Gtk::Label result_; ///< the last archive or snapshot folder
    Gtk::Button openFolder_;
    EventTree eventTree_;
    Gtk::HeaderBar header_;
    Gtk::Label title_;

    bool daemonPresent_ = false;
    std::set<std::string> busy_; ///< paths of sessions with an action under way
    /// Rotations answered and not yet complete: archive folder -> session name.
    std::map<std::string, std::string> rotations_;
    std::string resultPath_;     ///< the folder "Open folder" opens
    std::string treeShownFor_;   ///< what the event tree shows: path, name and rules
    std::string selectWhenSeen_; ///< a session just created, selected once it is shown
    sigc::connection refreshIdle_;
    sigc::connection tick_;
};

} // namespace tracectl::gui
