// sd-bus for Swift. Swift calls the non-variadic sd-bus API directly (sd_bus_message_append_basic,
// open_container, read_basic, …); what is left here is what only C can write: the object vtables,
// which the SD_BUS_VTABLE macros build as C initialisers. Each vtable entry calls a trampoline that
// hands the call to the Swift functions in `CSdBus_Handlers`, with the Swift side's context.
#ifndef CSDBUS_H
#define CSDBUS_H

#include <systemd/sd-bus.h>

/// A method call on one of the objects below; returns what an sd-bus method handler returns
/// (1 when a reply was sent, a negative errno with `error` set on failure).
typedef int (*CSdBus_MethodHandler)(sd_bus_message *call, void *context, sd_bus_error *error);
/// A property read: appends the value of `property` (of the vtable's type) to `reply`.
typedef int (*CSdBus_PropertyGetter)(const char *interface, const char *property, sd_bus_message *reply,
                                     void *context, sd_bus_error *error);

/// Where the trampolines send each call; must stay alive as long as the slot it was registered with.
typedef struct CSdBus_Handlers {
    CSdBus_MethodHandler method;
    CSdBus_PropertyGetter property;
    void *context;
} CSdBus_Handlers;

/// Serves `com.canonical.dbusmenu` (the dbusmenu protocol, version 3) at `path`: the methods
/// GetLayout, GetGroupProperties, GetProperty, Event, EventGroup, AboutToShow, AboutToShowGroup,
/// the signals ItemsPropertiesUpdated, LayoutUpdated and ItemActivationRequested, and the
/// properties Version, TextDirection, Status and IconThemePath.
int CSdBus_add_dbusmenu(sd_bus *bus, sd_bus_slot **slot, const char *path, CSdBus_Handlers *handlers);

/// Serves `com.canonical.Unity.LauncherEntry` at `path`: the Update signal and the Query method
/// (the app URI and properties a dock started later may ask for).
int CSdBus_add_launcher_entry(sd_bus *bus, sd_bus_slot **slot, const char *path, CSdBus_Handlers *handlers);

#endif
