// The property tables and signal bodies of src/daemon/bus/object_vtable.hpp
// and the node lists of node_list.hpp, on a small object type and messages
// built without a bus daemon.
#include "bus/node_list.hpp"
#include "bus/object_vtable.hpp"
#include "bus_message_test_support.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace tracectl::bus;
using namespace tracectl::bus::test;

namespace {

constexpr const char* kWidgetInterface = "org.example.Widget1";

/// A small object type with a property table: a const string, a changing
/// number, and a string array whose getter throws when `broken`.
struct Widget {
    std::string name;
    uint32_t count = 0;
    std::vector<std::string> tags;
    bool broken = false;

    static const Property<Widget> kProperties[3];
};

const Property<Widget> Widget::kProperties[3] = {
    {"Name", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Widget& w, sd_bus_message* m) {
         check(sd_bus_message_append(m, "s", w.name.c_str()), "s");
     }},
    {"Count", "u", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Widget& w, sd_bus_message* m) {
         check(sd_bus_message_append(m, "u", w.count), "u");
     }},
    {"Tags", "as", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Widget& w, sd_bus_message* m) {
         if (w.broken)
             throw std::runtime_error("the tags are broken");
         check(sd_bus_message_open_container(m, 'a', "s"), "as");
         for (const auto& t : w.tags)
             check(sd_bus_message_append(m, "s", t.c_str()), "s");
         check(sd_bus_message_close_container(m), "as");
     }},
};

int onPing(sd_bus_message*, void*, sd_bus_error*) {
    return 0;
}

const sd_bus_vtable kMembers[] = {
    SD_BUS_METHOD("Ping", "s", "u", &onPing, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Poked", "s", 0),
};

/// One entry of an a{sv}: key, value signature, value as text (numbers in
/// decimal, string arrays joined with ',').
struct Entry {
    std::string key;
    std::string type;
    std::string value;
    bool operator==(const Entry&) const = default;
};

void PrintTo(const Entry& e, std::ostream* os) {
    *os << e.key << ":" << e.type << "=" << e.value;
}

/// Reads the a{sv} at the read position, in message order, for the value
/// types Widget uses (s, u, as).
std::vector<Entry> readProperties(sd_bus_message* m) {
    std::vector<Entry> out;
    check(sd_bus_message_enter_container(m, 'a', "{sv}"), "a{sv}");
    while (check(sd_bus_message_enter_container(m, 'e', "sv"), "{sv}") > 0) {
        Entry e;
        const char* key = nullptr;
        check(sd_bus_message_read_basic(m, 's', &key), "s");
        e.key = key;
        const char* type = nullptr;
        check(sd_bus_message_peek_type(m, nullptr, &type), "peek v");
        e.type = type;
        check(sd_bus_message_enter_container(m, 'v', type), "v");
        if (e.type == "s") {
            const char* s = nullptr;
            check(sd_bus_message_read_basic(m, 's', &s), "s");
            e.value = s;
        } else if (e.type == "u") {
            uint32_t u = 0;
            check(sd_bus_message_read_basic(m, 'u', &u), "u");
            e.value = std::to_string(u);
        } else if (e.type == "as") {
            for (const auto& s : readStrings(m))
                e.value += (e.value.empty() ? "" : ",") + s;
        } else {
            ADD_FAILURE() << "unexpected value type " << e.type;
            check(sd_bus_message_skip(m, type), "skip");
        }
        check(sd_bus_message_exit_container(m), "v");
        check(sd_bus_message_exit_container(m), "{sv}");
        out.push_back(std::move(e));
    }
    check(sd_bus_message_exit_container(m), "a{sv}");
    return out;
}

class ObjectVtable : public ::testing::Test {
protected:
    UnconnectedBusPtr bus_ = unconnectedBus();
    MessagePtr m_ = newMessage(bus_.get());
    Widget widget_{"gizmo", 7, {"red", "round"}};

    const Entry name_{"Name", "s", "gizmo"};
    const Entry count_{"Count", "u", "7"};
    const Entry tags_{"Tags", "as", "red,round"};
};

TEST_F(ObjectVtable, BuildVtableHasStartMembersOnePropertyEachAndEnd) {
    const std::vector<sd_bus_vtable> v = buildVtable<Widget>(kMembers);
    ASSERT_EQ(v.size(), 1u + 2u + 3u + 1u);
    EXPECT_EQ(v[0].type, _SD_BUS_VTABLE_START);
    EXPECT_EQ(v[0].x.start.element_size, sizeof(sd_bus_vtable));

    EXPECT_EQ(v[1].type, _SD_BUS_VTABLE_METHOD);
    EXPECT_STREQ(v[1].x.method.member, "Ping");
    EXPECT_EQ(v[1].x.method.handler, &onPing);
    EXPECT_EQ(v[1].flags, SD_BUS_VTABLE_UNPRIVILEGED);
    EXPECT_EQ(v[2].type, _SD_BUS_VTABLE_SIGNAL);
    EXPECT_STREQ(v[2].x.signal.member, "Poked");

    for (std::size_t i = 0; i < 3; ++i) {
        const sd_bus_vtable& p = v[3 + i];
        const Property<Widget>& want = Widget::kProperties[i];
        EXPECT_EQ(p.type, _SD_BUS_VTABLE_PROPERTY) << want.name;
        EXPECT_STREQ(p.x.property.member, want.name);
        EXPECT_STREQ(p.x.property.signature, want.signature);
        EXPECT_EQ(p.x.property.get, &getProperty<Widget>) << want.name;
        EXPECT_EQ(p.x.property.set, nullptr) << want.name << " is read-only";
        EXPECT_EQ(p.flags, want.flags) << want.name;
    }
    EXPECT_EQ(v[3].flags, SD_BUS_VTABLE_PROPERTY_CONST);
    EXPECT_EQ(v[4].flags, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE);
    EXPECT_EQ(v.back().type, _SD_BUS_VTABLE_END);
}

TEST_F(ObjectVtable, SdBusAcceptsTheBuiltVtable) {
    // sd_bus_add_object_vtable(3) checks every entry (names, signatures,
    // flags) and refuses a malformed table with -EINVAL.
    const std::vector<sd_bus_vtable> v = buildVtable<Widget>(kMembers);
    sd_bus_slot* raw = nullptr;
    ASSERT_GE(sd_bus_add_object_vtable(bus_.get(), &raw, "/org/example/widget", kWidgetInterface,
                                       v.data(), &widget_),
              0);
    SlotPtr slot(raw);
}

TEST_F(ObjectVtable, AppendPropertiesGivesAllInTableOrder) {
    appendProperties(m_.get(), widget_, {});
    sealForReading(m_.get());
    EXPECT_EQ(signatureOf(m_.get()), "a{sv}");
    EXPECT_EQ(readProperties(m_.get()), (std::vector<Entry>{name_, count_, tags_}));
}

TEST_F(ObjectVtable, AppendPropertiesGivesOnlyTheNamedOnesInTableOrder) {
    appendProperties(m_.get(), widget_, {"Tags", "Name"});
    appendProperties(m_.get(), widget_, {"Count"});
    appendProperties(m_.get(), widget_, {"NoSuchProperty"});
    sealForReading(m_.get());
    EXPECT_EQ(signatureOf(m_.get()), "a{sv}a{sv}a{sv}");
    EXPECT_EQ(readProperties(m_.get()), (std::vector<Entry>{name_, tags_}));
    EXPECT_EQ(readProperties(m_.get()), (std::vector<Entry>{count_}));
    EXPECT_TRUE(readProperties(m_.get()).empty());
}

TEST_F(ObjectVtable, AThrowingGetterStopsAppendProperties) {
    widget_.broken = true;
    EXPECT_THROW(appendProperties(m_.get(), widget_, {}), std::runtime_error);
}

TEST_F(ObjectVtable, InterfacesAddedListsTheStandardInterfacesThenTheObjectsWithItsProperties) {
    appendInterfacesAdded(m_.get(), "/org/example/widget", kWidgetInterface, widget_);
    sealForReading(m_.get());
    ASSERT_EQ(signatureOf(m_.get()), "oa{sa{sv}}");
    const char* path = nullptr;
    ASSERT_EQ(sd_bus_message_read_basic(m_.get(), 'o', &path), 1);
    EXPECT_STREQ(path, "/org/example/widget");
    std::vector<std::pair<std::string, std::vector<Entry>>> interfaces;
    ASSERT_GE(sd_bus_message_enter_container(m_.get(), 'a', "{sa{sv}}"), 0);
    while (check(sd_bus_message_enter_container(m_.get(), 'e', "sa{sv}"), "{sa{sv}}") > 0) {
        const char* name = nullptr;
        check(sd_bus_message_read_basic(m_.get(), 's', &name), "s");
        interfaces.emplace_back(name, readProperties(m_.get()));
        check(sd_bus_message_exit_container(m_.get()), "{sa{sv}}");
    }
    ASSERT_GE(sd_bus_message_exit_container(m_.get()), 0);
    EXPECT_EQ(sd_bus_message_at_end(m_.get(), 1), 1);

    const std::vector<std::pair<std::string, std::vector<Entry>>> expected = {
        {"org.freedesktop.DBus.Peer", {}},
        {"org.freedesktop.DBus.Introspectable", {}},
        {"org.freedesktop.DBus.Properties", {}},
        {kWidgetInterface, {name_, count_, tags_}},
    };
    EXPECT_EQ(interfaces, expected);
}

TEST_F(ObjectVtable, InterfacesRemovedListsTheStandardInterfacesThenTheObjects) {
    appendInterfacesRemoved(m_.get(), "/org/example/widget", kWidgetInterface);
    sealForReading(m_.get());
    ASSERT_EQ(signatureOf(m_.get()), "oas");
    const char* path = nullptr;
    ASSERT_EQ(sd_bus_message_read_basic(m_.get(), 'o', &path), 1);
    EXPECT_STREQ(path, "/org/example/widget");
    EXPECT_EQ(readStrings(m_.get()),
              (std::vector<std::string>{"org.freedesktop.DBus.Peer",
                                        "org.freedesktop.DBus.Introspectable",
                                        "org.freedesktop.DBus.Properties", kWidgetInterface}));
    EXPECT_EQ(sd_bus_message_at_end(m_.get(), 1), 1);
}

TEST_F(ObjectVtable, PropertiesChangedCarriesTheNewValuesAndInvalidatesNothing) {
    widget_.count = 8;
    appendPropertiesChanged(m_.get(), kWidgetInterface, widget_, {"Count"});
    sealForReading(m_.get());
    ASSERT_EQ(signatureOf(m_.get()), "sa{sv}as");
    const char* interface = nullptr;
    ASSERT_EQ(sd_bus_message_read_basic(m_.get(), 's', &interface), 1);
    EXPECT_STREQ(interface, kWidgetInterface);
    EXPECT_EQ(readProperties(m_.get()), (std::vector<Entry>{{"Count", "u", "8"}}));
    EXPECT_TRUE(readStrings(m_.get()).empty());
    EXPECT_EQ(sd_bus_message_at_end(m_.get(), 1), 1);
}

TEST_F(ObjectVtable, PropertiesChangedOfSeveralFollowsTheTableOrder) {
    appendPropertiesChanged(m_.get(), kWidgetInterface, widget_, {"Tags", "Count"});
    sealForReading(m_.get());
    const char* interface = nullptr;
    ASSERT_EQ(sd_bus_message_read_basic(m_.get(), 's', &interface), 1);
    EXPECT_EQ(readProperties(m_.get()), (std::vector<Entry>{count_, tags_}));
    EXPECT_TRUE(readStrings(m_.get()).empty());
}

TEST_F(ObjectVtable, GetPropertyAppendsTheNamedValue) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    ASSERT_EQ(getProperty<Widget>(bus_.get(), "/org/example/widget", kWidgetInterface, "Count",
                                  m_.get(), &widget_, &error),
              1);
    EXPECT_FALSE(sd_bus_error_is_set(&error));
    sealForReading(m_.get());
    EXPECT_EQ(signatureOf(m_.get()), "u");
    uint32_t count = 0;
    ASSERT_EQ(sd_bus_message_read_basic(m_.get(), 'u', &count), 1);
    EXPECT_EQ(count, 7u);
}

TEST_F(ObjectVtable, GetPropertyOfAThrowingGetterIsAnErrorWithItsMessage) {
    widget_.broken = true;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    EXPECT_LT(getProperty<Widget>(bus_.get(), "/org/example/widget", kWidgetInterface, "Tags",
                                  m_.get(), &widget_, &error),
              0);
    ASSERT_TRUE(sd_bus_error_is_set(&error));
    EXPECT_STREQ(error.name, SD_BUS_ERROR_FAILED);
    EXPECT_STREQ(error.message, "the tags are broken");
    sd_bus_error_free(&error);
}

TEST_F(ObjectVtable, GetPropertyOfAnUnknownNameIsUnknownProperty) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    EXPECT_LT(getProperty<Widget>(bus_.get(), "/org/example/widget", kWidgetInterface, "Colour",
                                  m_.get(), &widget_, &error),
              0);
    ASSERT_TRUE(sd_bus_error_is_set(&error));
    EXPECT_STREQ(error.name, SD_BUS_ERROR_UNKNOWN_PROPERTY);
    EXPECT_NE(std::string(error.message).find("Colour"), std::string::npos) << error.message;
    sd_bus_error_free(&error);
}

/// Frees a node list the way sd-bus does (every string, then the array).
struct NodeListFree {
    void operator()(char** list) const noexcept {
        for (char** s = list; *s != nullptr; ++s)
            std::free(*s); // NOLINT: toNodeList's strings are malloc'd
        std::free(list);   // NOLINT: as above
    }
};
using NodeList = std::unique_ptr<char*, NodeListFree>;

TEST(NodeListTest, IsANullTerminatedCopyOfThePaths) {
    const std::vector<std::string> paths = {"/org/tracectl/Tracing1/session/a",
                                            "/org/tracectl/Tracing1/session/b_2"};
    NodeList list(toNodeList(paths));
    ASSERT_NE(list, nullptr);
    ASSERT_NE(list.get()[0], nullptr);
    ASSERT_NE(list.get()[1], nullptr);
    EXPECT_STREQ(list.get()[0], paths[0].c_str());
    EXPECT_STREQ(list.get()[1], paths[1].c_str());
    EXPECT_NE(list.get()[0], paths[0].c_str()) << "a copy, not the vector's buffer";
    EXPECT_EQ(list.get()[2], nullptr);
}

TEST(NodeListTest, OfNoPathsIsAnEmptyList) {
    NodeList list(toNodeList({}));
    ASSERT_NE(list, nullptr) << "an empty list, not an error";
    EXPECT_EQ(list.get()[0], nullptr);
}

} // namespace
