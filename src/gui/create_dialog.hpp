// The create-session dialog: name, output folder (typed, or chosen with the desktop's folder
// chooser), relay URL, mode (normal, snapshot, live), buffers (per UID, per PID) and whether
// to count events. It only gathers a CreateRequest: the window sends it, the daemon decides,
// and an error comes back here to be shown as the daemon worded it, with the dialog still
// open so that the user can correct it.
#pragma once

#include "create_request.hpp"

#include <gtkmm/box.h>
#include <gtkmm/button.h>
#include <gtkmm/checkbutton.h>
#include <gtkmm/entry.h>
#include <gtkmm/filechoosernative.h>
#include <gtkmm/grid.h>
#include <gtkmm/label.h>
#include <gtkmm/window.h>
#include <sigc++/signal.h>
#include <string>

namespace tracectl::gui {

class CreateDialog : public Gtk::Window {
public:
    /// A modal dialog over `parent`, titled "New Tracing Session" (also its accessible name).
    explicit CreateDialog(Gtk::Window& parent);

    /// Emitted by "Create" (or Enter in a field) with the fields' values.
    sigc::signal<void(const CreateRequest&)>& signalCreate() { return create_; }

    /// Clears the fields and the error, and shows the dialog.
    void open();

    /// Emitted when the typed name changes, with the new name: the window asks the daemon
    /// which folder a session of that name would get (show_default_output).
    sigc::signal<void(const std::string&)>& signalNameChanged() { return nameChanged_; }

    /// Shows, under the output folder while it is left empty, the folder the daemon would
    /// choose for a session named `name` ("" when it cannot say); ignored if the name has
    /// changed since. The label's accessible description is "Default output folder".
    void showDefaultOutput(const std::string& name, const std::string& path);

    /// While busy, "Create" is insensitive and says the request is being sent.
    void setBusy(bool busy);

    /// Shows `message` (the daemon's words) under the fields, with `title` above it in bold;
    /// the label's accessible description is "Error". The fields keep their values.
    void showError(const std::string& title, const std::string& message);

private:
    void chooseFolder();
    void submit();
    CreateRequest request() const;

    Gtk::Box content_;
    Gtk::Grid grid_;
    Gtk::Entry name_;
    Gtk::Box outputBox_;
    Gtk::Entry output_;
    Gtk::Button choose_;
    Gtk::Label defaultOutput_;
    Gtk::Entry url_;
    Gtk::Box modeBox_;
    Gtk::CheckButton normal_;
    Gtk::CheckButton snapshot_;
    Gtk::CheckButton live_;
    Gtk::Box buffersBox_;
    Gtk::CheckButton perUid_;
    Gtk::CheckButton perPid_;
    Gtk::CheckButton countEvents_;
    Gtk::Label error_;
    Gtk::Box buttons_;
    Gtk::Button cancel_;
    Gtk::Button createButton_;
    Glib::RefPtr<Gtk::FileChooserNative> chooser_;
    sigc::signal<void(const CreateRequest&)> create_;
    sigc::signal<void(const std::string&)> nameChanged_;
};

} // namespace tracectl::gui
