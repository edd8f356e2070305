// The sessions view: one row per session (SessionRow), in columns Name, State, Mode, Owner,
// Output, Events/s, MB/s, Discarded and Last minute (a RateGraph), under a header. Single
// selection. Accessible: the list is named "Sessions", each row "Session NAME", and each cell is a
// label whose text is the value and whose accessible description is its column's title.
#pragma once

#include "sessions_model.hpp"

#include <gtkmm/box.h>
#include <gtkmm/label.h>
#include <gtkmm/listbox.h>
#include <gtkmm/scrolledwindow.h>
#include <gtkmm/sizegroup.h>
#include <map>
#include <optional>
#include <sigc++/signal.h>
#include <string>
#include <vector>

namespace tracectl::gui {

class SessionRowWidget;

class SessionsView : public Gtk::Box {
public:
    SessionsView();

    /// Shows exactly `rows`, in their order: rows of new sessions are added, rows of sessions
    /// not in `rows` removed, the others updated in place (the selection stays).
    void showRows(const std::vector<SessionRow>& rows);

    /// Selects the row of the session at `path`; no-op if it is not shown.
    void select(const std::string& path);

    /// The selected session's row as last shown, if any.
    std::optional<SessionRow> selected() const;

    /// Emitted when the selection changes, and when the selected row's content changes.
    sigc::signal<void()>& signalSelectionChanged() { return selectionChanged_; }

private:
    std::vector<Glib::RefPtr<Gtk::SizeGroup>> columns_;
    Gtk::Box header_;
    Gtk::ScrolledWindow scroller_;
    Gtk::ListBox list_;
    Gtk::Label placeholder_;
    std::map<std::string, SessionRowWidget*> rows_; ///< by object path; owned by list_
    sigc::signal<void()> selectionChanged_;
};

} // namespace tracectl::gui
