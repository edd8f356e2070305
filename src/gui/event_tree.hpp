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
inline constexpr const char* ust_domain = "ust";
inline constexpr const char* kernel_domain = "kernel";

class EventTree : public Gtk::Box {
public:
    EventTree();

    /// Adds the application, or shows its tracepoints anew.
    void show_application(const ApplicationInfo& application);
    /// Removes the application at `path`; no-op if not shown.
    void remove_application(const std::string& path);
    void clear_applications();

    /// Shows the kernel's tracepoints, or why they could not be listed (as the daemon said).
    void show_kernel(const std::vector<KernelTracepoint>& tracepoints,
                     const std::optional<CallError>& error);
    /// Forgets the kernel's list (the daemon left): asked again at the next expansion.
    void clear_kernel();

    /// The selected session: `name` ("" for none) and its enabled rules (pattern -> channel);
    /// the check boxes follow them. Without a session the check boxes and the rule entry are
    /// insensitive.
    void show_session(const std::string& name, const std::map<std::string, std::string>& ust,
                      const std::map<std::string, std::string>& kernel);

    /// A check box was checked (`enable` true) or unchecked by the user:
    /// (domain, pattern, enable).
    sigc::signal<void(std::string, std::string, bool)>& signal_toggled() { return toggled_; }
    /// "Enable rule" was pressed: (domain, pattern, options), as typed.
    sigc::signal<void(std::string, std::string, RuleOptions)>& signal_rule() { return rule_; }
    /// "Kernel tracepoints" was expanded and the list is not known yet.
    sigc::signal<void()>& signal_kernel_wanted() { return kernel_wanted_; }

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
    void make_check(Gtk::Box& box, const std::string& owner, const std::string& domain,
                    const std::string& pattern, const std::string& tooltip);
    /// Fills a kernel system's box with its tracepoints' check boxes (at its first expansion).
    void fill_system(Gtk::Box& box, const std::string& system);
    /// Sets every check box from the session's rules (not a user's toggle).
    void apply_rules();
    void drop_checks_of(const std::string& owner);

    Gtk::Label session_label_;
    Gtk::ScrolledWindow scroller_;
    Gtk::Box content_;
    Gtk::Expander applications_expander_;
    Gtk::Box applications_box_;
    Gtk::Label no_applications_;
    Gtk::Expander kernel_expander_;
    Gtk::Box kernel_box_;
    Gtk::Label kernel_status_;
    Gtk::Grid rule_grid_;
    Gtk::Entry pattern_;
    Gtk::Entry loglevel_;
    Gtk::Entry filter_;
    Gtk::CheckButton ust_choice_;
    Gtk::CheckButton kernel_choice_;
    Gtk::Button enable_rule_;

    std::map<std::string, ApplicationNode> applications_; ///< by object path
    std::map<std::string, std::vector<KernelTracepoint>> kernel_systems_;
    bool kernel_asked_ = false;
    std::vector<Check> checks_;
    std::string session_;
    std::map<std::string, std::string> ust_rules_;
    std::map<std::string, std::string> kernel_rules_;
    bool applying_ = false; ///< set while check states follow the rules (not the user)

    sigc::signal<void(std::string, std::string, bool)> toggled_;
    sigc::signal<void(std::string, std::string, RuleOptions)> rule_;
    sigc::signal<void()> kernel_wanted_;
};

} // namespace tracectl::gui
