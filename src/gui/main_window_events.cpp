// MainWindow: the event tree's requests (a tracepoint switched on or off, a rule from the
// entry) turned into EnableEvents / DisableEvents, and the selected session shown in the tree.
#include "main_window.hpp"
#include "quoted.hpp"

namespace tracectl::gui {
namespace {

/// The channel a rule made in the window goes to: the session's first channel of `domain`,
/// else "" (the daemon makes channel0), as lttng enable-event without --channel does when
/// the session has one channel.
std::string ruleChannel(const SessionRow& row, const std::string& domain) {
    const auto& channels = domain == kKernelDomain ? row.kernelChannels : row.ustChannels;
    return channels.empty() ? std::string() : channels.front();
}

} // namespace

void MainWindow::onTracepointToggled(const std::string& domain, const std::string& pattern,
                                     bool enable) {
    const std::optional<SessionRow> row = view_.selected();
    if (!client_ || !row) {
        return;
    }
    messageBar_.set_visible(false);
    const std::string name = row->name;
    auto reply = [this, name, pattern, enable](const std::optional<CallError>& error) {
        if (error) {
            showMessage("Could not " + std::string(enable ? "enable " : "disable ") + pattern +
                        " in session " + quoted(name) + ": " + error->message);
            treeShownFor_.clear(); // the check box goes back to what the session has
            updateActions();
            return;
        }
        status_.set_text(std::string(enable ? "Enabled " : "Disabled ") + pattern + " in " +
                         quoted(name));
    };
    if (enable) {
        client_->enableEvents(row->path, domain, ruleChannel(*row, domain), pattern, {}, reply);
        return;
    }
    const auto& rules = domain == kKernelDomain ? row->kernelRules : row->ustRules;
    const auto rule = rules.find(pattern);
    client_->disableEvents(row->path, domain, rule != rules.end() ? rule->second : "", pattern,
                           reply);
}

void MainWindow::onRule(const std::string& domain, const std::string& pattern,
                        const RuleOptions& options) {
    const std::optional<SessionRow> row = view_.selected();
    if (!client_ || !row) {
        return;
    }
    messageBar_.set_visible(false);
    const std::string name = row->name;
    client_->enableEvents(row->path, domain, ruleChannel(*row, domain), pattern, options,
                          [this, name, pattern](const std::optional<CallError>& error) {
                              if (error) {
                                  showMessage("Could not enable " + pattern + " in session " +
                                              quoted(name) + ": " + error->message);
                                  return;
                              }
                              status_.set_text("Enabled " + pattern + " in " + quoted(name));
                          });
}

void MainWindow::updateEventTree(const std::optional<SessionRow>& row) {
    std::string key;
    if (row) {
        key = row->path + '\n' + row->name;
        for (const auto* rules : {&row->ustRules, &row->kernelRules}) {
            key += '\n';
            for (const auto& [pattern, channel] : *rules) {
                key += pattern + '\t' + channel + '\t';
            }
        }
    }
    if (key == treeShownFor_ && !key.empty()) {
        return;
    }
    treeShownFor_ = key;
    if (row) {
        eventTree_.showSession(row->name, row->ustRules, row->kernelRules);
    } else {
        eventTree_.showSession({}, {}, {});
    }
}

} // namespace tracectl::gui
