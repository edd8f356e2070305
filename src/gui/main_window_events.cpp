// MainWindow: the event tree's requests (a tracepoint switched on or off, a rule from the
// entry) turned into EnableEvents / DisableEvents, and the selected session shown in the tree.
#include "main_window.hpp"
#include "quoted.hpp"

namespace tracectl::gui {
namespace {

/// The channel a rule made in the window goes to: the session's first channel of `domain`,
/// else "" (the daemon makes channel0), as lttng enable-event without --channel does when
/// the session has one channel.
std::string rule_channel(const SessionRow& row, const std::string& domain) {
    const auto& channels = domain == kernel_domain ? row.kernel_channels : row.ust_channels;
    return channels.empty() ? std::string() : channels.front();
}

} // namespace

void MainWindow::on_tracepoint_toggled(const std::string& domain, const std::string& pattern,
                                       bool enable) {
    const std::optional<SessionRow> row = view_.selected();
    if (!client_ || !row) {
        return;
    }
    message_bar_.set_visible(false);
    const std::string name = row->name;
    auto reply = [this, name, pattern, enable](const std::optional<CallError>& error) {
        if (error) {
            show_message("Could not " + std::string(enable ? "enable " : "disable ") + pattern +
                         " in session " + quoted(name) + ": " + error->message);
            tree_shown_for_.clear(); // the check box goes back to what the session has
            update_actions();
            return;
        }
        status_.set_text(std::string(enable ? "Enabled " : "Disabled ") + pattern + " in " +
                         quoted(name));
    };
    if (enable) {
        client_->enable_events(row->path, domain, rule_channel(*row, domain), pattern, {}, reply);
        return;
    }
    const auto& rules = domain == kernel_domain ? row->kernel_rules : row->ust_rules;
    const auto rule = rules.find(pattern);
    client_->disable_events(row->path, domain, rule != rules.end() ? rule->second : "", pattern,
                            reply);
}

void MainWindow::on_rule(const std::string& domain, const std::string& pattern,
                         const RuleOptions& options) {
    const std::optional<SessionRow> row = view_.selected();
    if (!client_ || !row) {
        return;
    }
    message_bar_.set_visible(false);
    const std::string name = row->name;
    client_->enable_events(row->path, domain, rule_channel(*row, domain), pattern, options,
                           [this, name, pattern](const std::optional<CallError>& error) {
                               if (error) {
                                   show_message("Could not enable " + pattern + " in session " +
                                                quoted(name) + ": " + error->message);
                                   return;
                               }
                               status_.set_text("Enabled " + pattern + " in " + quoted(name));
                           });
}

void MainWindow::update_event_tree(const std::optional<SessionRow>& row) {
    std::string key;
    if (row) {
        key = row->path + '\n' + row->name;
        for (const auto* rules : {&row->ust_rules, &row->kernel_rules}) {
            key += '\n';
            for (const auto& [pattern, channel] : *rules) {
                key += pattern + '\t' + channel + '\t';
            }
        }
    }
    if (key == tree_shown_for_ && !key.empty()) {
        return;
    }
    tree_shown_for_ = key;
    if (row) {
        event_tree_.show_session(row->name, row->ust_rules, row->kernel_rules);
    } else {
        event_tree_.show_session({}, {}, {});
    }
}

} // namespace tracectl::gui
