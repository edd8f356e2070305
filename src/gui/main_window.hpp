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
    void on_presence(bool present, const std::string& reason);
    void on_bus_lost(const std::string& reason);
    void on_create(const CreateRequest& request);
    void on_action(SessionAction action);
    void on_rotate();
    void on_snapshot();
    /// A Session signal: a rotation's archive is complete (or failed), a snapshot written.
    void on_chunk(const std::string& session, ChunkEvent event, const std::string& path,
                  const std::string& reason);
    /// Shows `path` (a folder the daemon wrote) with "Open folder"; `what` says what it is.
    void show_result(const std::string& what, const std::string& path);
    void open_result_folder();
    void on_tracepoint_toggled(const std::string& domain, const std::string& pattern, bool enable);
    void on_rule(const std::string& domain, const std::string& pattern, const RuleOptions& options);
    /// Marks the session at `path` busy (buttons off, spinner on) or done.
    void set_busy(const std::string& path, bool busy);
    /// The selected session, now busy, with "<doing> <name>…" in the status line; nullopt (and
    /// nothing changed) if no session is selected, it is busy already, or no daemon is there.
    std::optional<SessionRow> begin_action(const std::string& doing);
    /// The selected session's name and rules, shown in the event tree when they changed.
    void update_event_tree(const std::optional<SessionRow>& row);
    /// Coalesces the model's changes into one redraw at the next idle turn.
    void schedule_refresh();
    void refresh();
    void update_actions();
    void show_banner(const std::string& title, const std::string& detail, bool can_retry);
    void show_message(const std::string& text);

    SessionsModel model_;
    std::unique_ptr<DaemonClient> client_;
    std::optional<CreateDialog> dialog_;

    Gtk::Box layout_;
    Gtk::Box banner_;
    Gtk::Label banner_title_;
    Gtk::Label banner_detail_;
    Gtk::Button retry_;
    Gtk::Box message_bar_;
    Gtk::Label message_;
    Gtk::Button dismiss_;
    Gtk::Box toolbar_;
    Gtk::Button new_session_;
    Gtk::Button start_;
    Gtk::Button stop_;
    Gtk::Button rotate_;
    Gtk::Button snapshot_;
    Gtk::Button destroy_;
    Gtk::Spinner spinner_;
    Gtk::Label status_;
    Gtk::Paned paned_;
    Gtk::Box sessions_side_;
    SessionsView view_;
    Gtk::Label details_; ///< the selected session: state, mode, output, error reason
    Gtk::Box result_bar_;
    Gtk::Label result_; ///< the last archive or snapshot folder
    Gtk::Button open_folder_;
    EventTree event_tree_;
    Gtk::HeaderBar header_;
    Gtk::Label title_;

    bool daemon_present_ = false;
    std::set<std::string> busy_; ///< paths of sessions with an action under way
    /// Rotations answered and not yet complete: archive folder -> session name.
    std::map<std::string, std::string> rotations_;
    std::string result_path_;      ///< the folder "Open folder" opens
    std::string tree_shown_for_;   ///< what the event tree shows: path, name and rules
    std::string select_when_seen_; ///< a session just created, selected once it is shown
    sigc::connection refresh_idle_;
    sigc::connection tick_;
};

} // namespace tracectl::gui
