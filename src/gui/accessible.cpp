#include "accessible.hpp"

#include <glibmm/ustring.h>
#include <glibmm/value.h>

namespace tracectl::gui {
namespace {

void setStringProperty(Gtk::Accessible& widget, Gtk::Accessible::Property property,
                       const std::string& text) {
    Glib::Value<Glib::ustring> value;
    value.init(Glib::Value<Glib::ustring>::value_type());
    value.set(text);
    widget.update_property(property, value);
}

} // namespace

void setAccessibleLabel(Gtk::Accessible& widget, const std::string& label) {
    setStringProperty(widget, Gtk::Accessible::Property::LABEL, label);
}

void setAccessibleDescription(Gtk::Accessible& widget, const std::string& description) {
    setStringProperty(widget, Gtk::Accessible::Property::DESCRIPTION, description);
}

} // namespace tracectl::gui
