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
const char* progressVerb(SessionAction action) {
    switch (action) {
    case SessionAction::Start:
        return "Starting";
    case SessionAction::Stop:
        return "Stopping";
    case SessionAction::Destroy:
        break;
    }
    return "Destroying";
}

/// "start", "stop", "destroy".
const char* verb(SessionAction action) {
    switch (action) {
    case SessionAction::Start:
        return "start";
    case SessionAction::Stop:
        return "stop";
    case SessionAction::Destroy:
        break;
    }
    return "destroy";
}

} // namespace

void MainWindow::onAction(SessionAction action) {
    const std::optional<SessionRow> row = beginAction(progressVerb(action));
    if (!row) {
        return;
    }
    const std::string path = row->path;
    const std::string name = row->name;
    client_->act(action, path, [this, action, path, name](const std::optional<CallError>& error) {
        setBusy(path, false);
        if (error) {
            status_.set_text("");
            showMessage("Could not " + std::string(verb(action)) + " session " + quoted(name) +
                        ": " + error->message);
        } else {
            status_.set_text(std::string(progressVerb(action)) + " " + quoted(name) + ": done");
        }
        updateActions();
    });
}

std::optional<SessionRow> MainWindow::beginAction(const std::string& doing) {
    std::optional<SessionRow> row = view_.selected();
    if (!client_ || !row || busy_.contains(row->path)) {
        return std::nullopt;
    }
    setBusy(row->path, true);
    messageBar_.set_visible(false);
    status_.set_text(doing + " " + gui::quoted(row->name) + "…");
    return row;
}

void MainWindow::setBusy(const std::string& path, bool busy) {
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
    updateActions();
}

void MainWindow::onRotate() {
    const std::optional<SessionRow> row = beginAction("Rotating");
    if (!row) {
        return;
    }
    const std::string path = row->path;
    const std::string name = row->name;
    client_->rotate(path, [this, path, name](const std::string& archive,
                                             const std::optional<CallError>& error) {
        if (error) {
            setBusy(path, false);
            status_.set_text("");
            showMessage("Could not rotate session " + quoted(name) + ": " + error->message);
            return;
        }
        // The archive is complete at RotationCompleted (or RotationFailed): busy until then.
        rotations_.emplace(archive, name);
        status_.set_text("Rotating " + quoted(name) + ": archiving into " + archive + "…");
    });
}

void MainWindow::onSnapshot() {
    const std::optional<SessionRow> row = beginAction("Recording a snapshot of");
    if (!row) {
        return;
    }
    const std::string path = row->path;
    const std::string name = row->name;
    client_->recordSnapshot(
        path, [this, path, name](const std::string& folder, const std::optional<CallError>& error) {
            setBusy(path, false);
            if (error) {
                status_.set_text("");
                showMessage("Could not record a snapshot of session " + quoted(name) + ": " +
                            error->message);
                return;
            }
            status_.set_text("Recorded a snapshot of " + quoted(name));
            showResult("Snapshot of " + quoted(name), folder);
        });
}

void MainWindow::onChunk(const std::string& session, ChunkEvent event, const std::string& path,
                         const std::string& reason) {
    const std::string name =
        model_.contains(session) ? model_.nameOf(session) : std::string("a session");
    switch (event) {
    case ChunkEvent::SnapshotRecorded:
        showResult("Snapshot of " + quoted(name), path);
        return;
    case ChunkEvent::RotationCompleted:
    case ChunkEvent::RotationFailed:
        break;
    }
    if (rotations_.erase(path) != 0) {
        setBusy(session, false);
    }
    if (event == ChunkEvent::RotationFailed) {
        status_.set_text("");
        showMessage("The rotation of session " + quoted(name) + " failed: " + reason);
        showResult("Incomplete archive of " + quoted(name), path);
        return;
    }
    status_.set_text("Rotated " + quoted(name));
    showResult("Archive of " + quoted(name), path);
}

void MainWindow::showResult(const std::string& what, const std::string& path) {
    resultPath_ = path;
    result_.set_text(what + ": " + path);
    // A network session's snapshot is a path on the relay's host: nothing to open here.
    openFolder_.set_sensitive(!path.empty() && path.front() == '/');
    resultBar_.set_visible(true);
}

void MainWindow::openResultFolder() {
    std::string uri;
    try {
        uri = Glib::filename_to_uri(resultPath_);
        Gio::AppInfo::launch_default_for_uri(uri);
    } catch (const Glib::Error& e) {
        showMessage("Could not open " + (uri.empty() ? resultPath_ : uri) + ": " + e.what());
        return;
    }
    status_.set_text("Opened " + uri);
}

} // namespace tracectl::gui
