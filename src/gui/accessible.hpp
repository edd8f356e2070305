// Accessible names and descriptions (what AT-SPI, screen readers and the GUI tests read).
#pragma once

#include <gtkmm/accessible.h>
#include <string>

namespace tracectl::gui {

/// Sets the accessible name (GTK_ACCESSIBLE_PROPERTY_LABEL) of `widget`.
void setAccessibleLabel(Gtk::Accessible& widget, const std::string& label);

/// Sets the accessible description (GTK_ACCESSIBLE_PROPERTY_DESCRIPTION) of `widget`.
void setAccessibleDescription(Gtk::Accessible& widget, const std::string& description);

} // namespace tracectl::gui
