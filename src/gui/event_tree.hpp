// The event tree: what the selected session records. The registered applications, each with
// its tracepoints (Application.ListTracepoints), and the kernel's tracepoints by tracefs system
// (Manager.ListTracepoints("kernel"), asked when "Kernel tracepoints" is first expanded), each
// tracepoint a switch (a check box's job: GTK 4.8 gives check buttons no AT-SPI action, switches
// one) that is on when the session has an enabled rule of exactly that pattern; below, a rule
// entry: pattern, log level, filter and domain. The tree decides nothing: checking, unchecking and
// "Enable rule" are signals the window turns into EnableEvents / DisableEvents, and the check boxes
// follow the session's Events and KernelEvents as the daemon announces them.
//
// Accessible: the tree's header label is described "Event tree session"; an application's
// expander is named "Application NAME (pid PID)", the kernel's "Kernel tracepoints", a
// system's "Kernel system SYSTEM"; a tracepoint's switch is named by its pattern ("provider:event",
// "system:event"); the entries are named "Pattern", "Log level" and "Filter"; a kernel list
// that failed shows the daemon's words in a label described "Kernel tracepoints error".
#pragma once

#include "daemon_client.hpp"

#include <gtkmm/box.h>
#include <gtkmm/button.h>
#include <gtkmm/checkbutton.h>
#include <gtkmm/entry.h>
#include <gtkmm/expander.h>
#include <gtkmm/grid.h>
#include <gtkmm/label.h>
#include <gtkmm/scrolledwindow.h>
#include <gtkmm/switch.h>
#include <map>
#include <optional>
#include <sigc++/signal.h>
#include <string>
#include <vector>

namespace tracectl::gui {

/// A tracepoint's domain, as EnableEvents names it.
inline constexpr const char* kUstDomain = "ust";
inline constexpr const char* kKernelDomain = "kernel";

class EventTree : public Gtk::Box {
public:
    EventTree();

    /// Adds the application, or shows its tracepoints anew.
    void showApplication(const ApplicationInfo& application);
    /// Removes the application at `path`; no-op if not shown.
    void removeApplication(const std::string& path);
    void clearApplications();

    /// Shows the kernel's tracepoints, or why they could not be listed (as the daemon said).
    void showKernel(const std::vector<KernelTracepoint>& tracepoints,
                    const std::optional<CallError>& error);
    /// Forgets the kernel's list (the daemon left): asked again at the next expansion.
    void clearKernel();

    /// The selected session: `name` ("" for none) and its enabled rules (pattern -> channel);
    /// the check boxes follow them. Without a session the check boxes and the rule entry are
    /// insensitive.
    void showSession(const std::string& name, const std::map<std::string, std::string>& ust,
                     const std::map<std::string, std::string>& kernel);

    /// A check box was checked (`enable` true) or unchecked by the user:
    /// (domain, pattern, enable).
    sigc::signal<void(std::string, std::string, bool)>& signalToggled() { return toggled_; }
    /// "Enable rule" was pressed: (domain, pattern, options), as typed.
    sigc::signal<void(std::string, std::string, RuleOptions)>& signalRule() { return rule_; }
    /// "Kernel tracepoints" was expanded and the list is not known yet.
    sigc::signal<void()>& signalKernelWanted() { return kernelWanted_; }

private:
    struct Check {
        std::string owner; ///< the application's path, or "kernel:" + system
        std::string domain;
        std::string pattern;
        Gtk::Switch* button; ///< owned by its row
    };
    struct ApplicationNode {
        Gtk::Expander* expander; ///< owned by applications_box_
        std::vector<std::string> patterns;
    };

    /// A check box for `pattern` in `box`, following the session's rules.
    void makeCheck(Gtk::Box& box, const std::string& owner, const std::string& domain,
                   const std::string& pattern, const std::string& tooltip);
    /// Fills a kernel system's box with its tracepoints' check boxes (at its first expansion).
    void fillSystem(Gtk::Box& box, const std::string& system);
    /// Sets every check box from the session's rules (not a user's toggle).
    void applyRules();
    void dropChecksOf(const std::string& owner);

    Gtk::Label sessionLabel_;
    Gtk::ScrolledWindow scroller_;
    Gtk::Box content_;
    Gtk::Expander applicationsExpander_;
    Gtk::Box applicationsBox_;
    Gtk::Label noApplications_;
    Gtk::Expander kernelExpander_;
    Gtk::Box kernelBox_;
    Gtk::Label kernelStatus_;
    Gtk::Grid ruleGrid_;
    Gtk::Entry pattern_;
    Gtk::Entry loglevel_;
    Gtk::Entry filter_;
    Gtk::CheckButton ustChoice_;
    Gtk::CheckButton kernelChoice_;
    Gtk::Button enableRule_;

    std::map<std::string, ApplicationNode> applications_; ///< by object path
    std::map<std::string, std::vector<KernelTracepoint>> kernelSystems_;
    bool kernelAsked_ = false;
    std::vector<Check> checks_;
    std::string session_;
    std::map<std::string, std::string> ustRules_;
    std::map<std::string, std::string> kernelRules_;
    bool applying_ = false; ///< set while check states follow the rules (not the user)

    sigc::signal<void(std::string, std::string, bool)> toggled_;
    sigc::signal<void(std::string, std::string, RuleOptions)> rule_;
    sigc::signal<void()> kernelWanted_;
};

} // namespace tracectl::gui
