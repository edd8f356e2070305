// answerLookup (src/daemon/bus/object_lookup.cpp), the find callback's
// answer for an object the caller may or may not see. Outside a dispatch it
// is called directly; inside one, through real sd-bus dispatch on a direct
// peer-to-peer connection over a socketpair (sd_bus_set_fd(3),
// sd_bus_set_server(3)): no bus daemon, the same object tree code
// (fallback vtable, node enumerator, object manager) as the daemon uses.
#include "bus/node_list.hpp"
#include "bus/object_lookup.hpp"
#include "bus_message_test_support.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <systemd/sd-id128.h>
#include <thread>
#include <vector>

using namespace tracectl::bus;
using namespace tracectl::bus::test;

namespace {

constexpr const char* kInterface = "org.example.Gadget1";
constexpr const char* kManager = "/org/example";
constexpr const char* kPrefix = "/org/example/gadget";
constexpr const char* kShown = "/org/example/gadget/shown";
constexpr const char* kHidden = "/org/example/gadget/hidden";
constexpr const char* kDeniedWhy = "this gadget belongs to someone else";

struct Gadget {
    uint32_t serial;
    bool visible;
};

TEST(ObjectLookup, OutsideADispatchFindsEvenAnInvisibleObject) {
    // No message is being dispatched: the daemon itself is reading.
    UnconnectedBusPtr bus = unconnectedBus();
    ASSERT_EQ(sd_bus_get_current_message(bus.get()), nullptr);
    Gadget gadget{1, false};
    for (const bool visible : {false, true}) {
        void* found = nullptr;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        EXPECT_EQ(answerLookup(bus.get(), kHidden, &gadget, visible, kInterface, kDeniedWhy, &found,
                               &error),
                  1)
            << visible;
        EXPECT_EQ(found, &gadget);
        EXPECT_FALSE(sd_bus_error_is_set(&error));
    }
}

int onSerial(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return sd_bus_reply_method_return(m, "u", static_cast<Gadget*>(userdata)->serial);
}

int getSerial(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply, void* userdata,
              sd_bus_error*) {
    return sd_bus_message_append(reply, "u", static_cast<Gadget*>(userdata)->serial);
}

const sd_bus_vtable kVtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Serial", "", "u", &onSerial, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_PROPERTY("Serial", "u", &getSerial, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_VTABLE_END,
};

/// The gadgets served under kPrefix, by path.
using Gadgets = std::map<std::string, Gadget>;

/// The find callback of the fallback vtable, as the daemon's: the gadget at
/// `path`, visible or not, answered by answerLookup.
int findGadget(sd_bus* bus, const char* path, const char*, void* userdata, void** found,
               sd_bus_error* error) {
    auto& gadgets = *static_cast<Gadgets*>(userdata);
    const auto it = gadgets.find(path);
    if (it == gadgets.end())
        return 0;
    return answerLookup(bus, path, &it->second, it->second.visible, kInterface, kDeniedWhy, found,
                        error);
}

/// Lists every gadget, visible or not, so that only answerLookup decides
/// what GetManagedObjects shows.
int enumerateGadgets(sd_bus*, const char*, void* userdata, char*** nodes, sd_bus_error*) {
    std::vector<std::string> paths;
    for (const auto& [path, gadget] : *static_cast<Gadgets*>(userdata))
        paths.push_back(path);
    *nodes = toNodeList(paths);
    return *nodes != nullptr ? 0 : -ENOMEM;
}

/// A server and a client sd-bus connection on the two ends of a socketpair;
/// the server serves the gadgets from its own thread.
class DispatchedLookup : public ::testing::Test {
protected:
    void SetUp() override {
        ConnectedPeers peers = connectedPeers();
        server_ = std::move(peers.server);
        client_ = std::move(peers.client);
        ASSERT_GE(sd_bus_set_method_call_timeout(client_.get(), 10'000'000), 0);

        sd_bus_slot* slot = nullptr;
        ASSERT_GE(sd_bus_add_object_manager(server_.get(), &slot, kManager), 0);
        slots_.emplace_back(slot);
        ASSERT_GE(sd_bus_add_fallback_vtable(server_.get(), &slot, kPrefix, kInterface, kVtable,
                                             &findGadget, &gadgets_),
                  0);
        slots_.emplace_back(slot);
        ASSERT_GE(
            sd_bus_add_node_enumerator(server_.get(), &slot, kPrefix, &enumerateGadgets, &gadgets_),
            0);
        slots_.emplace_back(slot);

        serving_ = std::thread([this] { serve(); });
    }

    void TearDown() override {
        stop_ = true;
        if (serving_.joinable())
            serving_.join();
        EXPECT_EQ(serveError_, 0) << std::strerror(-serveError_);
    }

    /// The server's loop; once started, only this thread touches server_
    /// and gadgets_.
    void serve() {
        while (!stop_) {
            const int r = sd_bus_process(server_.get(), nullptr);
            if (r < 0) {
                serveError_ = r;
                return;
            }
            if (r == 0)
                sd_bus_wait(server_.get(), 20'000);
        }
    }

    /// Calls `member` of `interface` on `path` with no arguments; the reply,
    /// or null with `error` set.
    MessagePtr call(const char* path, const char* interface, const char* member,
                    sd_bus_error* error, const char* types = nullptr, const char* arg1 = nullptr,
                    const char* arg2 = nullptr) {
        sd_bus_message* reply = nullptr;
        int r = 0;
        if (types == nullptr)
            r = sd_bus_call_method(client_.get(), nullptr, path, interface, member, error, &reply,
                                   nullptr);
        else if (arg2 == nullptr)
            r = sd_bus_call_method(client_.get(), nullptr, path, interface, member, error, &reply,
                                   types, arg1);
        else
            r = sd_bus_call_method(client_.get(), nullptr, path, interface, member, error, &reply,
                                   types, arg1, arg2);
        EXPECT_EQ(r < 0, sd_bus_error_is_set(error) != 0);
        return MessagePtr(r < 0 ? nullptr : reply);
    }

    /// The object paths GetManagedObjects on kManager lists.
    std::vector<std::string> managedObjects() {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        MessagePtr reply =
            call(kManager, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &error);
        std::vector<std::string> paths;
        EXPECT_NE(reply, nullptr) << (error.message != nullptr ? error.message : "");
        sd_bus_error_free(&error);
        if (reply == nullptr)
            return paths;
        sd_bus_message* m = reply.get();
        check(sd_bus_message_enter_container(m, 'a', "{oa{sa{sv}}}"), "a{oa{sa{sv}}}");
        while (check(sd_bus_message_enter_container(m, 'e', "oa{sa{sv}}"), "{oa{sa{sv}}}") > 0) {
            const char* path = nullptr;
            check(sd_bus_message_read_basic(m, 'o', &path), "o");
            paths.emplace_back(path);
            check(sd_bus_message_skip(m, "a{sa{sv}}"), "a{sa{sv}}");
            check(sd_bus_message_exit_container(m), "{oa{sa{sv}}}");
        }
        return paths;
    }

    Gadgets gadgets_{{kShown, {11, true}}, {kHidden, {22, false}}};
    UnconnectedBusPtr server_;
    UnconnectedBusPtr client_;
    std::vector<SlotPtr> slots_;
    std::thread serving_;
    std::atomic<bool> stop_{false};
    std::atomic<int> serveError_{0};
};

TEST_F(DispatchedLookup, ParentListingsLeaveTheInvisibleObjectOut) {
    // GetManagedObjects is addressed to kManager: the hidden gadget's
    // lookup is for another path, so it is "not there".
    EXPECT_EQ(managedObjects(), (std::vector<std::string>{kShown}));
}

/// The same gadgets, both visible (set before the server thread starts).
class DispatchedLookupAllVisible : public DispatchedLookup {
protected:
    DispatchedLookupAllVisible() { gadgets_.at(kHidden).visible = true; }
};

TEST_F(DispatchedLookupAllVisible, ParentListingsShowEveryVisibleObject) {
    auto paths = managedObjects();
    std::sort(paths.begin(), paths.end());
    EXPECT_EQ(paths, (std::vector<std::string>{kHidden, kShown}));
}

TEST_F(DispatchedLookup, ReadingTheInvisibleObjectsPropertiesIsAccessDenied) {
    for (const char* member : {"Get", "GetAll"}) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        MessagePtr reply =
            std::string(member) == "Get"
                ? call(kHidden, "org.freedesktop.DBus.Properties", member, &error, "ss", kInterface,
                       "Serial")
                : call(kHidden, "org.freedesktop.DBus.Properties", member, &error, "s", kInterface);
        EXPECT_EQ(reply, nullptr) << member;
        EXPECT_STREQ(error.name, SD_BUS_ERROR_ACCESS_DENIED) << member;
        EXPECT_STREQ(error.message, kDeniedWhy) << member;
        sd_bus_error_free(&error);
    }
}

TEST_F(DispatchedLookup, TheVisibleObjectsPropertiesAreRead) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    MessagePtr reply =
        call(kShown, "org.freedesktop.DBus.Properties", "Get", &error, "ss", kInterface, "Serial");
    ASSERT_NE(reply, nullptr) << error.message;
    uint32_t serial = 0;
    ASSERT_EQ(sd_bus_message_read(reply.get(), "v", "u", &serial), 1);
    EXPECT_EQ(serial, 11u);
}

TEST_F(DispatchedLookup, ACallOfTheObjectsOwnInterfaceReachesTheInvisibleObject) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    MessagePtr reply = call(kHidden, kInterface, "Serial", &error);
    ASSERT_NE(reply, nullptr) << error.message;
    uint32_t serial = 0;
    ASSERT_EQ(sd_bus_message_read(reply.get(), "u", &serial), 1);
    EXPECT_EQ(serial, 22u) << "the hidden gadget itself answered";
}

TEST_F(DispatchedLookup, IntrospectOfTheInvisibleObjectDescribesItsInterface) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    MessagePtr reply = call(kHidden, "org.freedesktop.DBus.Introspectable", "Introspect", &error);
    ASSERT_NE(reply, nullptr) << error.message;
    const char* xml = nullptr;
    ASSERT_EQ(sd_bus_message_read(reply.get(), "s", &xml), 1);
    EXPECT_NE(std::string(xml).find(std::string("<interface name=\"") + kInterface + "\">"),
              std::string::npos)
        << xml;
}

} // namespace
