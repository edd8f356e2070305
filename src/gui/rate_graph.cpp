#include "rate_graph.hpp"

#include "accessible.hpp"
#include "sessions_model.hpp"

#include <algorithm>
#include <gtkmm/stylecontext.h>

namespace tracectl::gui {

RateGraph::RateGraph() {
    set_content_width(100);
    set_content_height(24);
    set_valign(Gtk::Align::CENTER);
    setAccessibleLabel(*this, "Rate graph");
    set_draw_func(sigc::mem_fun(*this, &RateGraph::draw));
}

void RateGraph::showPoints(const std::vector<RatePoint>& points, const std::string& unit) {
    if (points == points_ && unit == unit_) {
        return;
    }
    points_ = points;
    unit_ = unit;
    queue_draw();
}

void RateGraph::draw(const Cairo::RefPtr<Cairo::Context>& cr, int width, int height) {
    // The frame: a faint background and baseline.
    cr->set_source_rgba(0.5, 0.5, 0.5, 0.12);
    cr->rectangle(0, 0, width, height);
    cr->fill();
    double peak = 0.0;
    for (const RatePoint& p : points_) {
        peak = std::max(peak, p.value);
    }
    std::string drawn = "no rate yet";
    if (!points_.empty()) {
        // Each rate was measured over the second (at least) before its sample: the first one
        // starts a second earlier, so a single point shows as a segment.
        std::vector<RatePoint> line{
            RatePoint{std::min(points_.front().secondsAgo + 1.0, RateHistory::kWindowS),
                      points_.front().value}};
        line.insert(line.end(), points_.begin(), points_.end());
        const double w = width - 2.0;
        const double h = height - 3.0;
        const auto x = [&](const RatePoint& p) {
            return 1.0 + w * (1.0 - p.secondsAgo / RateHistory::kWindowS);
        };
        const auto y = [&](const RatePoint& p) {
            return 1.0 + h * (peak > 0.0 ? 1.0 - p.value / peak : 1.0);
        };
        // The area under the line, then the line.
        cr->move_to(x(line.front()), height - 1.0);
        for (const RatePoint& p : line) {
            cr->line_to(x(p), y(p));
        }
        cr->line_to(x(line.back()), height - 1.0);
        cr->close_path();
        // The line in the text's colour, so that it shows on a selected row too.
        const Gdk::RGBA color = get_style_context()->get_color();
        cr->set_source_rgba(color.get_red(), color.get_green(), color.get_blue(), 0.25);
        cr->fill();
        cr->move_to(x(line.front()), y(line.front()));
        for (const RatePoint& p : line) {
            cr->line_to(x(p), y(p));
        }
        cr->set_source_rgba(color.get_red(), color.get_green(), color.get_blue(), 0.9);
        cr->set_line_width(1.5);
        cr->stroke();
        drawn = std::to_string(points_.size()) + " points, peak " + formatRate(peak) + " " + unit_;
    }
    if (drawn != drawn_) {
        drawn_ = drawn;
        setAccessibleDescription(*this, drawn_);
    }
}

} // namespace tracectl::gui
