#include "sessions_view.hpp"

#include "accessible.hpp"
#include "rate_graph.hpp"

#include <array>
#include <glibmm/markup.h>
#include <gtkmm/listboxrow.h>
#include <pangomm/layout.h>

namespace tracectl::gui {
namespace {

/// Column titles (also each cell's accessible description) and their widths in characters.
struct Column {
    const char* title;
    int widthChars;
    bool expand;
    float xalign;
};
constexpr std::array<Column, 8> kColumns{{
    {"Name", 12, false, 0.0F},
    {"State", 8, false, 0.0F},
    {"Mode", 8, false, 0.0F},
    {"Owner", 8, false, 0.0F},
    {"Output", 14, true, 0.0F},
    {"Events/s", 9, false, 1.0F},
    {"MB/s", 7, false, 1.0F},
    {"Discarded", 10, false, 1.0F},
}};

void setUpCell(Gtk::Label& label, const Column& column) {
    label.set_xalign(column.xalign);
    label.set_width_chars(column.widthChars);
    label.set_hexpand(column.expand);
    label.set_ellipsize(column.expand ? Pango::EllipsizeMode::MIDDLE : Pango::EllipsizeMode::END);
    label.set_margin_start(6);
    label.set_margin_end(6);
}

/// The last column: the rate graph, titled thus.
constexpr const char* kGraphTitle = "Last minute";

} // namespace

/// One session's row.
class SessionRowWidget : public Gtk::ListBoxRow {
public:
    explicit SessionRowWidget(const std::vector<Glib::RefPtr<Gtk::SizeGroup>>& groups)
        : box_(Gtk::Orientation::HORIZONTAL) {
        box_.set_margin_top(4);
        box_.set_margin_bottom(4);
        for (std::size_t i = 0; i < kColumns.size(); ++i) {
            setUpCell(cells_[i], kColumns[i]);
            setAccessibleDescription(cells_[i], kColumns[i].title);
            groups[i]->add_widget(cells_[i]);
            box_.append(cells_[i]);
        }
        graph_.set_margin_start(6);
        graph_.set_margin_end(6);
        groups.back()->add_widget(graph_);
        box_.append(graph_);
        set_child(box_);
    }

    /// Shows `row`; returns whether anything changed.
    bool show(const SessionRow& row, int order) {
        order_ = order;
        if (row == row_ && shown_) {
            return false;
        }
        if (row.name != row_.name || !shown_) {
            setAccessibleLabel(*this, "Session " + row.name);
        }
        const std::array<const std::string*, 8> values{&row.name,
                                                       &row.state,
                                                       &row.mode,
                                                       &row.owner,
                                                       &row.output,
                                                       &row.eventsPerSecond,
                                                       &row.megabytesPerSecond,
                                                       &row.discarded};
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (cells_[i].get_text().raw() != *values[i]) {
                cells_[i].set_text(*values[i]);
            }
        }
        graph_.showPoints(row.graph, row.graphUnit);
        row_ = row;
        shown_ = true;
        return true;
    }

    const SessionRow& row() const noexcept { return row_; }
    int order() const noexcept { return order_; }

private:
    Gtk::Box box_;
    std::array<Gtk::Label, kColumns.size()> cells_;
    RateGraph graph_;
    SessionRow row_;
    bool shown_ = false;
    int order_ = 0;
};

SessionsView::SessionsView()
    : Gtk::Box(Gtk::Orientation::VERTICAL), header_(Gtk::Orientation::HORIZONTAL) {
    header_.set_margin_top(4);
    header_.set_margin_bottom(4);
    for (const Column& column : kColumns) {
        columns_.push_back(Gtk::SizeGroup::create(Gtk::SizeGroup::Mode::HORIZONTAL));
        auto* title = Gtk::make_managed<Gtk::Label>();
        title->set_markup("<b>" + Glib::Markup::escape_text(column.title) + "</b>");
        setUpCell(*title, column);
        columns_.back()->add_widget(*title);
        header_.append(*title);
    }
    columns_.push_back(Gtk::SizeGroup::create(Gtk::SizeGroup::Mode::HORIZONTAL));
    auto* graphHeader = Gtk::make_managed<Gtk::Label>();
    graphHeader->set_markup(std::string("<b>") + kGraphTitle + "</b>");
    graphHeader->set_margin_start(6);
    graphHeader->set_margin_end(6);
    columns_.back()->add_widget(*graphHeader);
    header_.append(*graphHeader);
    append(header_);

    list_.set_selection_mode(Gtk::SelectionMode::SINGLE);
    setAccessibleLabel(list_, "Sessions");
    placeholder_.set_text("No tracing sessions. Create one with “New Session…”.");
    placeholder_.set_margin_top(24);
    placeholder_.set_margin_bottom(24);
    list_.set_placeholder(placeholder_);
    list_.set_sort_func([](Gtk::ListBoxRow* a, Gtk::ListBoxRow* b) {
        return dynamic_cast<SessionRowWidget&>(*a).order() -
               dynamic_cast<SessionRowWidget&>(*b).order();
    });
    list_.signal_selected_rows_changed().connect([this] { selectionChanged_.emit(); });
    scroller_.set_child(list_);
    scroller_.set_vexpand(true);
    scroller_.set_policy(Gtk::PolicyType::AUTOMATIC, Gtk::PolicyType::AUTOMATIC);
    append(scroller_);
}

void SessionsView::showRows(const std::vector<SessionRow>& rows) {
    std::map<std::string, SessionRowWidget*> kept;
    bool reorder = false;
    bool selectedChanged = false;
    const Gtk::ListBoxRow* selectedRow = list_.get_selected_row();
    int order = 0;
    for (const SessionRow& row : rows) {
        SessionRowWidget* widget = nullptr;
        if (const auto it = rows_.find(row.path); it != rows_.end()) {
            widget = it->second;
            rows_.erase(it);
            reorder = reorder || widget->order() != order;
        } else {
            widget = Gtk::make_managed<SessionRowWidget>(columns_);
            list_.append(*widget);
            reorder = true;
        }
        if (widget->show(row, order) && widget == selectedRow) {
            selectedChanged = true;
        }
        kept.emplace(row.path, widget);
        ++order;
    }
    for (const auto& [path, widget] : rows_) {
        selectedChanged = selectedChanged || widget == selectedRow;
        list_.remove(*widget); // managed: destroyed with its removal
    }
    rows_ = std::move(kept);
    if (reorder) {
        list_.invalidate_sort();
    }
    if (selectedChanged) {
        selectionChanged_.emit();
    }
}

void SessionsView::select(const std::string& path) {
    if (const auto it = rows_.find(path); it != rows_.end()) {
        list_.select_row(*it->second);
    }
}

std::optional<SessionRow> SessionsView::selected() const {
    const Gtk::ListBoxRow* row = list_.get_selected_row();
    if (row == nullptr) {
        return std::nullopt;
    }
    return dynamic_cast<const SessionRowWidget&>(*row).row();
}

} // namespace tracectl::gui
