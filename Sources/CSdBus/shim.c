#include "CSdBus.h"

static int method_trampoline(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    CSdBus_Handlers *handlers = userdata;
    return handlers->method(call, handlers->context, error);
}

static int property_trampoline(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    CSdBus_Handlers *handlers = userdata;
    return handlers->property(interface, property, reply, handlers->context, error);
}

// The interface as libdbusmenu's dbus-menu.xml declares it (names, signatures, argument names).
static const sd_bus_vtable dbusmenu_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Version", "u", property_trampoline, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("TextDirection", "s", property_trampoline, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Status", "s", property_trampoline, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("IconThemePath", "as", property_trampoline, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_METHOD_WITH_NAMES("GetLayout", "iias", SD_BUS_PARAM(parentId) SD_BUS_PARAM(recursionDepth) SD_BUS_PARAM(propertyNames),
                             "u(ia{sv}av)", SD_BUS_PARAM(revision) SD_BUS_PARAM(layout), method_trampoline, 0),
    SD_BUS_METHOD_WITH_NAMES("GetGroupProperties", "aias", SD_BUS_PARAM(ids) SD_BUS_PARAM(propertyNames),
                             "a(ia{sv})", SD_BUS_PARAM(properties), method_trampoline, 0),
    SD_BUS_METHOD_WITH_NAMES("GetProperty", "is", SD_BUS_PARAM(id) SD_BUS_PARAM(name),
                             "v", SD_BUS_PARAM(value), method_trampoline, 0),
    SD_BUS_METHOD_WITH_NAMES("Event", "isvu", SD_BUS_PARAM(id) SD_BUS_PARAM(eventId) SD_BUS_PARAM(data) SD_BUS_PARAM(timestamp),
                             "", , method_trampoline, 0),
    SD_BUS_METHOD_WITH_NAMES("EventGroup", "a(isvu)", SD_BUS_PARAM(events),
                             "ai", SD_BUS_PARAM(idErrors), method_trampoline, 0),
    SD_BUS_METHOD_WITH_NAMES("AboutToShow", "i", SD_BUS_PARAM(id),
                             "b", SD_BUS_PARAM(needUpdate), method_trampoline, 0),
    SD_BUS_METHOD_WITH_NAMES("AboutToShowGroup", "ai", SD_BUS_PARAM(ids),
                             "aiai", SD_BUS_PARAM(updatesNeeded) SD_BUS_PARAM(idErrors), method_trampoline, 0),
    SD_BUS_SIGNAL_WITH_NAMES("ItemsPropertiesUpdated", "a(ia{sv})a(ias)", SD_BUS_PARAM(updatedProps) SD_BUS_PARAM(removedProps), 0),
    SD_BUS_SIGNAL_WITH_NAMES("LayoutUpdated", "ui", SD_BUS_PARAM(revision) SD_BUS_PARAM(parent), 0),
    SD_BUS_SIGNAL_WITH_NAMES("ItemActivationRequested", "iu", SD_BUS_PARAM(id) SD_BUS_PARAM(timestamp), 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable launcher_entry_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_NAMES("Query", "", , "sa{sv}", SD_BUS_PARAM(app_uri) SD_BUS_PARAM(properties), method_trampoline, 0),
    SD_BUS_SIGNAL_WITH_NAMES("Update", "sa{sv}", SD_BUS_PARAM(app_uri) SD_BUS_PARAM(properties), 0),
    SD_BUS_VTABLE_END,
};

int CSdBus_add_dbusmenu(sd_bus *bus, sd_bus_slot **slot, const char *path, CSdBus_Handlers *handlers) {
    return sd_bus_add_object_vtable(bus, slot, path, "com.canonical.dbusmenu", dbusmenu_vtable, handlers);
}

int CSdBus_add_launcher_entry(sd_bus *bus, sd_bus_slot **slot, const char *path, CSdBus_Handlers *handlers) {
    return sd_bus_add_object_vtable(bus, slot, path, "com.canonical.Unity.LauncherEntry", launcher_entry_vtable, handlers);
}
