#include "accessible.hpp"

#include <glibmm/ustring.h>
#include <glibmm/value.h>

namespace tracectl::gui {
namespace {

void set_string_property(Gtk::Accessible& widget, Gtk::Accessible::Property property,
                         const std::string& text) {
    Glib::Value<Glib::ustring> value;
    value.init(Glib::Value<Glib::ustring>::value_type());
    value.set(text);
    widget.update_property(property, value);
}

} // namespace

void set_accessible_label(Gtk::Accessible& widget, const std::string& label) {
    set_string_property(widget, Gtk::Accessible::Property::LABEL, label);
}

void set_accessible_description(Gtk::Accessible& widget, const std::string& description) {
    set_string_property(widget, Gtk::Accessible::Property::DESCRIPTION, description);
}

} // namespace tracectl::gui
