// MainWindow: the session actions (Start, Stop, Destroy, Rotate, Snapshot), their progress,
// the Session signals that end a rotation or a snapshot, and the resulting folder with
// "Open folder".
#include "main_window.hpp"
#include "quoted.hpp"

#include <giomm/appinfo.h>
#include <glibmm/convert.h>

namespace tracectl::gui {
namespace {

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

} // namespace

void MainWindow::on_action(SessionAction action) {
    const std::optional<SessionRow> row = begin_action(progress_verb(action));
    if (!row) {
        return;
    }
    const std::string path = row->path;
    const std::string name = row->name;
    client_->act(action, path, [this, action, path, name](const std::optional<CallError>& error) {
        set_busy(path, false);
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

std::optional<SessionRow> MainWindow::begin_action(const std::string& doing) {
    std::optional<SessionRow> row = view_.selected();
    if (!client_ || !row || busy_.contains(row->path)) {
        return std::nullopt;
    }
    set_busy(row->path, true);
    message_bar_.set_visible(false);
    status_.set_text(doing + " " + gui::quoted(row->name) + "…");
    return row;
}

void MainWindow::set_busy(const std::string& path, bool busy) {
    if (busy) {
        busy_.insert(path);
    } else {
        busy_.erase(path);
    }
    if (busy_.empty()) {
        spinner_.stop();
    } else {
        spinner_.start();
    }
    update_actions();
}

void MainWindow::on_rotate() {
    const std::optional<SessionRow> row = begin_action("Rotating");
    if (!row) {
        return;
    }
    const std::string path = row->path;
    const std::string name = row->name;
    client_->rotate(path, [this, path, name](const std::string& archive,
                                             const std::optional<CallError>& error) {
        if (error) {
            set_busy(path, false);
            status_.set_text("");
            show_message("Could not rotate session " + quoted(name) + ": " + error->message);
            return;
        }
        // The archive is complete at RotationCompleted (or RotationFailed): busy until then.
        rotations_.emplace(archive, name);
        status_.set_text("Rotating " + quoted(name) + ": archiving into " + archive + "…");
    });
}

void MainWindow::on_snapshot() {
    const std::optional<SessionRow> row = begin_action("Recording a snapshot of");
    if (!row) {
        return;
    }
    const std::string path = row->path;
    const std::string name = row->name;
    client_->record_snapshot(
        path, [this, path, name](const std::string& folder, const std::optional<CallError>& error) {
            set_busy(path, false);
            if (error) {
                status_.set_text("");
                show_message("Could not record a snapshot of session " + quoted(name) + ": " +
                             error->message);
                return;
            }
            status_.set_text("Recorded a snapshot of " + quoted(name));
            show_result("Snapshot of " + quoted(name), folder);
        });
}

void MainWindow::on_chunk(const std::string& session, ChunkEvent event, const std::string& path,
                          const std::string& reason) {
    const std::string name =
        model_.contains(session) ? model_.name_of(session) : std::string("a session");
    switch (event) {
    case ChunkEvent::snapshot_recorded:
        show_result("Snapshot of " + quoted(name), path);
        return;
    case ChunkEvent::rotation_completed:
    case ChunkEvent::rotation_failed:
        break;
    }
    if (rotations_.erase(path) != 0) {
        set_busy(session, false);
    }
    if (event == ChunkEvent::rotation_failed) {
        status_.set_text("");
        show_message("The rotation of session " + quoted(name) + " failed: " + reason);
        show_result("Incomplete archive of " + quoted(name), path);
        return;
    }
    status_.set_text("Rotated " + quoted(name));
    show_result("Archive of " + quoted(name), path);
}

void MainWindow::show_result(const std::string& what, const std::string& path) {
    result_path_ = path;
    result_.set_text(what + ": " + path);
    // A network session's snapshot is a path on the relay's host: nothing to open here.
    open_folder_.set_sensitive(!path.empty() && path.front() == '/');
    result_bar_.set_visible(true);
}

void MainWindow::open_result_folder() {
    std::string uri;
    try {
        uri = Glib::filename_to_uri(result_path_);
        Gio::AppInfo::launch_default_for_uri(uri);
    } catch (const Glib::Error& e) {
        show_message("Could not open " + (uri.empty() ? result_path_ : uri) + ": " + e.what());
        return;
    }
    status_.set_text("Opened " + uri);
}

} // namespace tracectl::gui
