// The main window: a banner when tracectld is not there, a message bar for refused actions,
// the toolbar (New Session…, Start, Stop, Destroy) and the sessions view. It wires the
// DaemonClient's events into the SessionsModel and the view; it decides nothing the daemon
// decides (which action is allowed in which state, which names are valid): it asks, and
// shows the answer.
#pragma once

#include "command_line.hpp"
#include "create_dialog.hpp"
#include "daemon_client.hpp"
#include "sessions_model.hpp"
#include "sessions_view.hpp"

#include <gtkmm/applicationwindow.h>
#include <gtkmm/box.h>
#include <gtkmm/button.h>
#include <gtkmm/headerbar.h>
#include <gtkmm/label.h>
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
    Gtk::Button destroy_;
    Gtk::Label status_;
    SessionsView view_;
    Gtk::Label details_; ///< the selected session: state, mode, output, error reason
    Gtk::HeaderBar header_;
    Gtk::Label title_;

    bool daemon_present_ = false;
    std::set<std::string> busy_;   ///< paths of sessions with an action under way
    std::string select_when_seen_; ///< a session just created, selected once it is shown
    sigc::connection refresh_idle_;
    sigc::connection tick_;
};

} // namespace tracectl::gui
