// The introspection data tracectld serves matches the contract in dbus/*.xml:
// per interface org.tracectl.Tracing1.{Manager,Session,Application}, the
// methods with their argument types and directions, the properties with
// type and access, the signals with their argument types (names,
// annotations and comments may differ). Compared by
// tests/integration/compare_introspection.py against what `busctl
// introspect --xml-interface` gets from a running daemon (sandbox), on the
// manager, a session and an app object.
#include "child_process.hpp"
#include "eventually.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "tracectl_clients.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using namespace tracectl::test;

namespace {

std::string env(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : fallback;
}

std::string contractXml(const std::string& iface) {
    return env("TRACECTL_SOURCE_ROOT", ".") + "/dbus/" + iface + ".xml";
}

class Introspection : public SandboxSuite {
protected:
    /// What the daemon serves at `path`, saved under the sandbox; its file name.
    std::string served(const std::string& path, const std::string& name) {
        const RunResult xml =
            run({"busctl", "--system", "introspect", "--xml-interface", kService, path});
        EXPECT_TRUE(xml.ok()) << path << ": " << xml.describe();
        const std::string file = sandbox_->dir() + "/" + name + ".xml";
        std::ofstream(file) << xml.out;
        return file;
    }

    /// compare_introspection.py CONTRACT SERVED IFACE.
    static RunResult compare(const std::string& contract, const std::string& servedFile,
                             const std::string& iface) {
        return run(
            {"python3",
             env("TRACECTL_COMPARE_INTROSPECTION",
                 env("TRACECTL_SOURCE_ROOT", ".") + "/tests/integration/compare_introspection.py"),
             contract, servedFile, iface});
    }
};

TEST_F(Introspection, ServedInterfacesMatchTheContractXml) {
    const std::string session = manager_->CreateSession("introspected", {});
    ChildProcess app({demoApp(), "1000000", "100000"}, {}, sandbox_->dir() + "/log/apps.log");
    const std::string appPath = "/org/tracectl/Tracing1/application/" + std::to_string(app.pid());
    ASSERT_TRUE(eventually([&] { return listsApp(app.pid()); }, std::chrono::seconds(10)))
        << "the demo app was never listed";

    const struct {
        std::string iface;
        std::string path;
    } objects[] = {
        {"org.tracectl.Tracing1.Manager", kManagerPath},
        {"org.tracectl.Tracing1.Session", session},
        {"org.tracectl.Tracing1.Application", appPath},
    };
    for (const auto& o : objects) {
        const std::string file = served(o.path, o.iface);
        const RunResult same = compare(contractXml(o.iface), file, o.iface);
        EXPECT_TRUE(same.ok()) << o.iface << " at " << o.path << ":\n" << same.out << same.err;
        EXPECT_NE(same.out.find("members match"), std::string::npos) << same.out;
    }
}

// The comparison can fail: a contract whose Session.Rotate takes one more
// argument does not match what is served, and the difference is named.
TEST_F(Introspection, ADifferentSignatureIsReported) {
    const std::string iface = "org.tracectl.Tracing1.Session";
    std::ifstream in(contractXml(iface));
    std::string xml{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const std::string rotate = "<method name=\"Rotate\">";
    const auto at = xml.find(rotate);
    ASSERT_NE(at, std::string::npos);
    xml.insert(at + rotate.size(), "<arg name=\"extra\" type=\"u\" direction=\"in\"/>");
    const std::string doctored = sandbox_->dir() + "/doctored-session.xml";
    std::ofstream(doctored) << xml;

    const std::string file = served(manager_->CreateSession("doctored", {}), iface);
    const RunResult differs = compare(doctored, file, iface);
    EXPECT_EQ(differs.exitCode, 1) << differs.describe();
    EXPECT_NE(differs.out.find("method Rotate"), std::string::npos) << differs.out;
    // ...and an interface the object does not serve is reported too.
    EXPECT_EQ(compare(contractXml(iface), file, "org.tracectl.Tracing1.Application").exitCode, 1);
}

} // namespace
