#include "cli/view_command.hpp"

#include "cli/error_report.hpp"
#include "cli/stack_symbolizer.hpp"
#include "common/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

namespace tracectl::cli {

ExitStatus runSymbolizedView(const std::string& dir, std::ostream& out) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) {
        printErrorLine(std::cerr, "cannot run babeltrace2: " + std::string(std::strerror(errno)));
        return ExitStatus::DaemonError;
    }
    UniqueFd readEnd(ends[0]);
    UniqueFd writeEnd(ends[1]);
    out.flush();
    const pid_t child = ::fork();
    if (child < 0) {
        printErrorLine(std::cerr, "cannot run babeltrace2: " + std::string(std::strerror(errno)));
        return ExitStatus::DaemonError;
    }
    if (child == 0) {
        ::dup2(writeEnd.get(), STDOUT_FILENO);
        const char* argv[] = {"babeltrace2", dir.c_str(), nullptr};
        ::execvp(argv[0], const_cast<char* const*>(argv));
        const std::string message =
            "tracectl: cannot run babeltrace2: " + std::string(std::strerror(errno)) + "\n";
        (void)!::write(STDERR_FILENO, message.data(), message.size());
        ::_exit(127);
    }
    writeEnd.reset();
    StackSymbolizer symbolizer;
    std::string pending;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(readEnd.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        pending.append(buffer, static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (std::size_t eol = pending.find('\n'); eol != std::string::npos;
             eol = pending.find('\n', start)) {
            out << symbolizer.process(std::string_view(pending).substr(start, eol - start)) << '\n';
            start = eol + 1;
        }
        pending.erase(0, start);
    }
    if (!pending.empty())
        out << symbolizer.process(pending) << '\n';
    out.flush();
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return ExitStatus::Success;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return ExitStatus::DaemonError; // the child said why
    printErrorLine(std::cerr, "babeltrace2 failed on " + dir);
    return ExitStatus::DaemonError;
}

} // namespace tracectl::cli
