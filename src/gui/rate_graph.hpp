// A small line graph of one session's rate over the last minute (RateHistory's points), drawn
// with cairo in a Gtk::DrawingArea: time runs left (60 s ago) to right (now), the vertical
// scale fits the peak. Accessible: named "Rate graph"; once drawn, its description says what
// was drawn ("N points, peak X events/s"), or "no rate yet".
#pragma once

#include "rate_history.hpp"

#include <gtkmm/drawingarea.h>
#include <string>
#include <vector>

namespace tracectl::gui {

class RateGraph : public Gtk::DrawingArea {
public:
    RateGraph();

    /// Shows `points` (oldest first) measured in `unit`; redraws if they changed.
    void showPoints(const std::vector<RatePoint>& points, const std::string& unit);

private:
    void draw(const Cairo::RefPtr<Cairo::Context>& cr, int width, int height);

    std::vector<RatePoint> points_;
    std::string unit_;
    std::string drawn_; ///< the accessible description of the last drawing
};

} // namespace tracectl::gui
