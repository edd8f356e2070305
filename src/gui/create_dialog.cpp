#include "create_dialog.hpp"

#include "accessible.hpp"

#include <giomm/file.h>
#include <glibmm/markup.h>
#include <gtkmm/dialog.h>

namespace tracectl::gui {
namespace {

Gtk::Label& fieldLabel(const std::string& text, Gtk::Widget& field) {
    auto* label = Gtk::make_managed<Gtk::Label>(text, true);
    label->set_xalign(1.0F);
    label->set_mnemonic_widget(field);
    return *label;
}

} // namespace

CreateDialog::CreateDialog(Gtk::Window& parent)
    : content_(Gtk::Orientation::VERTICAL, 12), outputBox_(Gtk::Orientation::HORIZONTAL, 6),
      choose_("Choose…"), modeBox_(Gtk::Orientation::HORIZONTAL, 12), normal_("Normal"),
      snapshot_("Snapshot"), live_("Live"), buffersBox_(Gtk::Orientation::HORIZONTAL, 12),
      perUid_("Per UID"), perPid_("Per PID"), countEvents_("Count events (shows events/s)"),
      buttons_(Gtk::Orientation::HORIZONTAL, 6), cancel_("Cancel"), createButton_("Create") {
    set_title("New Tracing Session");
    set_transient_for(parent);
    set_modal(true);
    set_hide_on_close(true);
    set_default_size(560, -1);

    grid_.set_row_spacing(8);
    grid_.set_column_spacing(12);

    name_.set_hexpand(true);
    name_.set_activates_default(true);
    grid_.attach(fieldLabel("Session _name", name_), 0, 0);
    grid_.attach(name_, 1, 0);

    output_.set_hexpand(true);
    output_.set_activates_default(true);
    output_.set_placeholder_text("~/lttng-traces/NAME-DATE-TIME");
    choose_.signal_clicked().connect(sigc::mem_fun(*this, &CreateDialog::chooseFolder));
    outputBox_.append(output_);
    outputBox_.append(choose_);
    grid_.attach(fieldLabel("_Output folder", output_), 0, 1);
    grid_.attach(outputBox_, 1, 1);
    // The daemon's default folder, asked as the name is typed (Manager.DefaultOutputPath).
    defaultOutput_.set_xalign(0.0F);
    defaultOutput_.set_ellipsize(Pango::EllipsizeMode::MIDDLE);
    defaultOutput_.add_css_class("dim-label");
    setAccessibleDescription(defaultOutput_, "Default output folder");
    name_.signal_changed().connect([this] { nameChanged_.emit(name_.get_text()); });
    output_.signal_changed().connect(
        [this] { defaultOutput_.set_visible(output_.get_text().empty()); });

    grid_.attach(defaultOutput_, 1, 2);

    url_.set_hexpand(true);
    url_.set_activates_default(true);
    url_.set_placeholder_text("none: a local trace (net://HOST to stream to lttng-relayd)");
    grid_.attach(fieldLabel("Relay _URL", url_), 0, 3);
    grid_.attach(url_, 1, 3);

    snapshot_.set_group(normal_);
    live_.set_group(normal_);
    normal_.set_active(true);
    for (Gtk::CheckButton* button : {&normal_, &snapshot_, &live_}) {
        modeBox_.append(*button);
    }
    // A snapshot session records no event count (the daemon refuses it): a default only,
    // the box stays free to tick.
    snapshot_.signal_toggled().connect([this] {
        if (snapshot_.get_active()) {
            countEvents_.set_active(false);
        }
    });
    setAccessibleLabel(modeBox_, "Mode");
    auto* modeLabel = Gtk::make_managed<Gtk::Label>("Mode");
    modeLabel->set_xalign(1.0F);
    grid_.attach(*modeLabel, 0, 4);
    grid_.attach(modeBox_, 1, 4);

    perPid_.set_group(perUid_);
    perUid_.set_active(true);
    buffersBox_.append(perUid_);
    buffersBox_.append(perPid_);
    setAccessibleLabel(buffersBox_, "Buffers");
    auto* buffersLabel = Gtk::make_managed<Gtk::Label>("Buffers");
    buffersLabel->set_xalign(1.0F);
    grid_.attach(*buffersLabel, 0, 5);
    grid_.attach(buffersBox_, 1, 5);

    countEvents_.set_active(true);
    countEvents_.set_tooltip_text("The consumer counts every event record it writes, which "
                                  "costs CPU at millions of events per second");
    grid_.attach(countEvents_, 1, 6);

    error_.set_wrap(true);
    error_.set_xalign(0.0F);
    error_.set_selectable(true);
    error_.add_css_class("error");
    error_.set_visible(false);
    setAccessibleDescription(error_, "Error");

    cancel_.signal_clicked().connect([this] { set_visible(false); });
    createButton_.add_css_class("suggested-action");
    createButton_.signal_clicked().connect(sigc::mem_fun(*this, &CreateDialog::submit));
    buttons_.set_halign(Gtk::Align::END);
    buttons_.append(cancel_);
    buttons_.append(createButton_);
    set_default_widget(createButton_);

    content_.set_margin(18);
    content_.append(grid_);
    content_.append(error_);
    content_.append(buttons_);
    set_child(content_);
}

void CreateDialog::open() {
    name_.set_text("");
    output_.set_text("");
    defaultOutput_.set_text("");
    url_.set_text("");
    normal_.set_active(true);
    perUid_.set_active(true);
    countEvents_.set_active(true);
    error_.set_visible(false);
    setBusy(false);
    present();
    name_.grab_focus();
}

void CreateDialog::showDefaultOutput(const std::string& name, const std::string& path) {
    if (name != name_.get_text().raw()) {
        return; // an answer for a name typed before
    }
    defaultOutput_.set_text(path.empty() ? "" : "If left empty: " + path);
}

void CreateDialog::setBusy(bool busy) {
    createButton_.set_sensitive(!busy);
    createButton_.set_label(busy ? "Creating…" : "Create");
}

void CreateDialog::showError(const std::string& title, const std::string& message) {
    error_.set_markup("<b>" + Glib::Markup::escape_text(title) + "</b>\n" +
                      Glib::Markup::escape_text(message));
    error_.set_visible(true);
}

CreateRequest CreateDialog::request() const {
    CreateRequest request;
    request.name = name_.get_text();
    request.outputFolder = output_.get_text();
    request.relayUrl = url_.get_text();
    request.mode = snapshot_.get_active() ? "snapshot" : live_.get_active() ? "live" : "normal";
    request.bufferOwnership = perPid_.get_active() ? "per-pid" : "per-uid";
    request.countEvents = countEvents_.get_active();
    return request;
}

void CreateDialog::submit() {
    if (!createButton_.get_sensitive()) {
        return; // a request is under way
    }
    create_.emit(request());
}

void CreateDialog::chooseFolder() {
    chooser_ = Gtk::FileChooserNative::create(
        "Output Folder", *this, Gtk::FileChooser::Action::SELECT_FOLDER, "_Select", "_Cancel");
    chooser_->set_modal(true);
    chooser_->signal_response().connect([this](int response) {
        if (response == static_cast<int>(Gtk::ResponseType::ACCEPT)) {
            if (const Glib::RefPtr<Gio::File> folder = chooser_->get_file()) {
                output_.set_text(folder->get_path());
            }
        }
    });
    chooser_->show();
}

} // namespace tracectl::gui
