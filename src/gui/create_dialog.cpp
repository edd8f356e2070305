#include "create_dialog.hpp"

#include "accessible.hpp"

#include <giomm/file.h>
#include <glibmm/markup.h>
#include <gtkmm/dialog.h>

namespace tracectl::gui {
namespace {

Gtk::Label& field_label(const std::string& text, Gtk::Widget& field) {
    auto* label = Gtk::make_managed<Gtk::Label>(text, true);
    label->set_xalign(1.0F);
    label->set_mnemonic_widget(field);
    return *label;
}

} // namespace

CreateDialog::CreateDialog(Gtk::Window& parent)
    : content_(Gtk::Orientation::VERTICAL, 12), output_box_(Gtk::Orientation::HORIZONTAL, 6),
      choose_("Choose…"), mode_box_(Gtk::Orientation::HORIZONTAL, 12), normal_("Normal"),
      snapshot_("Snapshot"), live_("Live"), buffers_box_(Gtk::Orientation::HORIZONTAL, 12),
      per_uid_("Per UID"), per_pid_("Per PID"), count_events_("Count events (shows events/s)"),
      buttons_(Gtk::Orientation::HORIZONTAL, 6), cancel_("Cancel"), create_button_("Create") {
    set_title("New Tracing Session");
    set_transient_for(parent);
    set_modal(true);
    set_hide_on_close(true);
    set_default_size(560, -1);

    grid_.set_row_spacing(8);
    grid_.set_column_spacing(12);

    name_.set_hexpand(true);
    name_.set_activates_default(true);
    grid_.attach(field_label("Session _name", name_), 0, 0);
    grid_.attach(name_, 1, 0);

    output_.set_hexpand(true);
    output_.set_activates_default(true);
    output_.set_placeholder_text("~/lttng-traces/NAME-DATE-TIME");
    choose_.signal_clicked().connect(sigc::mem_fun(*this, &CreateDialog::choose_folder));
    output_box_.append(output_);
    output_box_.append(choose_);
    grid_.attach(field_label("_Output folder", output_), 0, 1);
    grid_.attach(output_box_, 1, 1);
    // The daemon's default folder, asked as the name is typed (Manager.DefaultOutputPath).
    default_output_.set_xalign(0.0F);
    default_output_.set_ellipsize(Pango::EllipsizeMode::MIDDLE);
    default_output_.add_css_class("dim-label");
    set_accessible_description(default_output_, "Default output folder");
    name_.signal_changed().connect([this] { name_changed_.emit(name_.get_text()); });
    output_.signal_changed().connect(
        [this] { default_output_.set_visible(output_.get_text().empty()); });

    grid_.attach(default_output_, 1, 2);

    url_.set_hexpand(true);
    url_.set_activates_default(true);
    url_.set_placeholder_text("none: a local trace (net://HOST to stream to lttng-relayd)");
    grid_.attach(field_label("Relay _URL", url_), 0, 3);
    grid_.attach(url_, 1, 3);

    snapshot_.set_group(normal_);
    live_.set_group(normal_);
    normal_.set_active(true);
    for (Gtk::CheckButton* button : {&normal_, &snapshot_, &live_}) {
        mode_box_.append(*button);
    }
    // A snapshot session records no event count (the daemon refuses it): a default only,
    // the box stays free to tick.
    snapshot_.signal_toggled().connect([this] {
        if (snapshot_.get_active()) {
            count_events_.set_active(false);
        }
    });
    set_accessible_label(mode_box_, "Mode");
    auto* mode_label = Gtk::make_managed<Gtk::Label>("Mode");
    mode_label->set_xalign(1.0F);
    grid_.attach(*mode_label, 0, 4);
    grid_.attach(mode_box_, 1, 4);

    per_pid_.set_group(per_uid_);
    per_uid_.set_active(true);
    buffers_box_.append(per_uid_);
    buffers_box_.append(per_pid_);
    set_accessible_label(buffers_box_, "Buffers");
    auto* buffers_label = Gtk::make_managed<Gtk::Label>("Buffers");
    buffers_label->set_xalign(1.0F);
    grid_.attach(*buffers_label, 0, 5);
    grid_.attach(buffers_box_, 1, 5);

    count_events_.set_active(true);
    count_events_.set_tooltip_text("The consumer counts every event record it writes, which "
                                   "costs CPU at millions of events per second");
    grid_.attach(count_events_, 1, 6);

    error_.set_wrap(true);
    error_.set_xalign(0.0F);
    error_.set_selectable(true);
    error_.add_css_class("error");
    error_.set_visible(false);
    set_accessible_description(error_, "Error");

    cancel_.signal_clicked().connect([this] { set_visible(false); });
    create_button_.add_css_class("suggested-action");
    create_button_.signal_clicked().connect(sigc::mem_fun(*this, &CreateDialog::submit));
    buttons_.set_halign(Gtk::Align::END);
    buttons_.append(cancel_);
    buttons_.append(create_button_);
    set_default_widget(create_button_);

    content_.set_margin(18);
    content_.append(grid_);
    content_.append(error_);
    content_.append(buttons_);
    set_child(content_);
}

void CreateDialog::open() {
    name_.set_text("");
    output_.set_text("");
    default_output_.set_text("");
    url_.set_text("");
    normal_.set_active(true);
    per_uid_.set_active(true);
    count_events_.set_active(true);
    error_.set_visible(false);
    set_busy(false);
    present();
    name_.grab_focus();
}

void CreateDialog::show_default_output(const std::string& name, const std::string& path) {
    if (name != name_.get_text().raw()) {
        return; // an answer for a name typed before
    }
    default_output_.set_text(path.empty() ? "" : "If left empty: " + path);
}

void CreateDialog::set_busy(bool busy) {
    create_button_.set_sensitive(!busy);
    create_button_.set_label(busy ? "Creating…" : "Create");
}

void CreateDialog::show_error(const std::string& title, const std::string& message) {
    error_.set_markup("<b>" + Glib::Markup::escape_text(title) + "</b>\n" +
                      Glib::Markup::escape_text(message));
    error_.set_visible(true);
}

CreateRequest CreateDialog::request() const {
    CreateRequest request;
    request.name = name_.get_text();
    request.output_folder = output_.get_text();
    request.relay_url = url_.get_text();
    request.mode = snapshot_.get_active() ? "snapshot" : live_.get_active() ? "live" : "normal";
    request.buffer_ownership = per_pid_.get_active() ? "per-pid" : "per-uid";
    request.count_events = count_events_.get_active();
    return request;
}

void CreateDialog::submit() {
    if (!create_button_.get_sensitive()) {
        return; // a request is under way
    }
    create_.emit(request());
}

void CreateDialog::choose_folder() {
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
