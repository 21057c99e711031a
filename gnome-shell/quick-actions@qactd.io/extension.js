// qactd's live quick actions in the menu of an app's icon, in the dash and in the app grid.
//
// qactd serves an app's favorites as a dbusmenu menu on the session bus and announces it with
// com.canonical.Unity.LauncherEntry.Update (the quicklist Dash to Dock and Plank read). This
// extension listens for those announcements, keeps each announced menu's items (read with
// GetLayout, read again on LayoutUpdated and ItemsPropertiesUpdated), and puts them into the
// menu of the app's icon, after the desktop entry's own actions, whenever it opens (and again
// while it is open when they change), each with its icon: the image of its icon-data (a
// favorite's face; GdkPixbuf reads the format from the bytes) or its themed icon-name. A click sends the item's dbusmenu "clicked" event to
// qactd, which triggers the quick action. It owns the name io.qactd.ShellExtension: qactd
// announces its menus again when that name gets an owner, so an extension enabled after qactd
// started has them at once. On that name it also publishes which apps run (RunningApps), so that
// qactd never makes a running app's desktop ID resolve to another file.
//
// One source for GNOME Shell 43 to 49. GNOME 45 and later import this file as an ES module and
// take its default export; GNOME 43 and 44 load an extension with GJS's legacy importer, which
// finds a folder named `extension` before `extension.js` and takes `init()` from its
// `__init__.js`. scripts/gnome-shell-extension writes that file from this one when the extension is
// installed, each import below becoming its legacy `imports.*` form and the default export a
// class returned by `init()`, so one installed folder serves every version.
// Nothing else differs: the app icon's AppMenu, the popup menus and Gio are the same from 43 to 49.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Shell from 'gi://Shell';
import * as AppMenu from 'resource:///org/gnome/shell/ui/appMenu.js';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as PopupMenu from 'resource:///org/gnome/shell/ui/popupMenu.js';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

const OWN_NAME = 'io.qactd.ShellExtension';
const LAUNCHER_ENTRY = 'com.canonical.Unity.LauncherEntry';
const DBUSMENU = 'com.canonical.dbusmenu';
const CALL_TIMEOUT_MS = 5000;
const OWN_PATH = '/io/qactd/ShellExtension';
const RUNNING_APPS_XML = `<node><interface name="${OWN_NAME}">
  <property name="RunningApps" type="as" access="read"/>
</interface></node>`;

// dbusmenu labels mark a mnemonic with "_" and write a literal one as "__".
function labelText(label) {
    return label.replace(/__|_/g, mark => (mark === '__' ? '_' : ''));
}

// An item's icon: its image when it has one, else its themed icon name; null for none.
function itemIcon(props) {
    const data = props['icon-data'];
    if (data && data.length > 0)
        return Gio.BytesIcon.new(data instanceof GLib.Bytes ? data : new GLib.Bytes(data));
    return props['icon-name'] ? Gio.ThemedIcon.new(props['icon-name']) : null;
}

// The menus qactd (or any program) announced, per desktop-file ID, and their items.
class Quicklists {
    constructor(onChange) {
        this._onChange = onChange;
        // app ID → {sender, path, items: [{id, label, icon}], generation}
        this._apps = new Map();
        const bus = Gio.DBus.session;
        const subscribe = (sender, iface, member, path, handler) => bus.signal_subscribe(
            sender, iface, member, path, null, Gio.DBusSignalFlags.NONE,
            (connection, senderName, objectPath, interfaceName, signalName, parameters) =>
                handler(senderName, objectPath, parameters));
        this._subscriptions = [
            subscribe(null, LAUNCHER_ENTRY, 'Update', null,
                (sender, path, parameters) => this._announced(sender, ...parameters.deepUnpack())),
            subscribe(null, DBUSMENU, 'LayoutUpdated', null, (sender, path) => this._menuChanged(sender, path)),
            subscribe(null, DBUSMENU, 'ItemsPropertiesUpdated', null, (sender, path) => this._menuChanged(sender, path)),
            subscribe('org.freedesktop.DBus', 'org.freedesktop.DBus', 'NameOwnerChanged', '/org/freedesktop/DBus',
                (sender, path, parameters) => {
                    const [name, , newOwner] = parameters.deepUnpack();
                    if (!newOwner)
                        this._senderLeft(name);
                }),
        ];
        this._ownId = Gio.bus_own_name_on_connection(bus, OWN_NAME, Gio.BusNameOwnerFlags.NONE, null, null);
    }

    destroy() {
        for (const id of this._subscriptions)
            Gio.DBus.session.signal_unsubscribe(id);
        Gio.bus_unown_name(this._ownId);
        this._apps.clear();
    }

    /** The items of `appId`'s quicklist, [] when none was announced. */
    items(appId) {
        return this._apps.get(appId)?.items ?? [];
    }

    /** Sends "clicked" for `itemId` of `appId`'s quicklist to the program that serves it. */
    activate(appId, itemId, timestamp) {
        const app = this._apps.get(appId);
        if (!app)
            return;
        Gio.DBus.session.call(app.sender, app.path, DBUSMENU, 'Event',
            new GLib.Variant('(isvu)', [itemId, 'clicked', new GLib.Variant('s', ''), timestamp]),
            null, Gio.DBusCallFlags.NONE, CALL_TIMEOUT_MS, null, (connection, result) => {
                try {
                    connection.call_finish(result);
                } catch (error) {
                    logError(error, `Quick actions: the click on item ${itemId} of ${appId} failed`);
                }
            });
    }

    _announced(sender, appUri, properties) {
        const appId = appUri.replace(/^\w+:\/\//, '');
        const quicklist = properties.quicklist?.unpack();
        if (!appId || quicklist === undefined)
            return;
        if (!quicklist) {
            if (this._apps.delete(appId))
                this._onChange(appId);
            return;
        }
        // One menu serves one app: a menu announced for another app leaves the one it served.
        for (const [otherId, other] of this._apps) {
            if (otherId !== appId && other.sender === sender && other.path === quicklist) {
                this._apps.delete(otherId);
                this._onChange(otherId);
            }
        }
        const app = this._apps.get(appId) ?? {items: [], generation: 0};
        app.sender = sender;
        app.path = quicklist;
        this._apps.set(appId, app);
        this._read(appId, app);
    }

    _menuChanged(sender, path) {
        for (const [appId, app] of this._apps) {
            if (app.sender === sender && app.path === path)
                this._read(appId, app);
        }
    }

    _senderLeft(name) {
        for (const [appId, app] of this._apps) {
            if (app.sender === name) {
                this._apps.delete(appId);
                this._onChange(appId);
            }
        }
    }

    // GetLayout of the whole menu; a reply older than the latest request is dropped.
    _read(appId, app) {
        const generation = ++app.generation;
        Gio.DBus.session.call(app.sender, app.path, DBUSMENU, 'GetLayout',
            new GLib.Variant('(iias)', [0, -1, []]), new GLib.VariantType('(u(ia{sv}av))'),
            Gio.DBusCallFlags.NONE, CALL_TIMEOUT_MS, null, (connection, result) => {
                let layout;
                try {
                    layout = connection.call_finish(result).recursiveUnpack();
                } catch (error) {
                    logError(error, `Quick actions: cannot read the quicklist of ${appId}`);
                    return;
                }
                if (this._apps.get(appId) !== app || app.generation !== generation)
                    return;
                const [, [, , children]] = layout;
                app.items = children
                    .filter(([, props]) => props.type !== 'separator' && props.visible !== false && props.label)
                    .map(([id, props]) => ({id, label: labelText(props.label), icon: itemIcon(props)}));
                this._onChange(appId);
            });
    }
}

// The desktop IDs of the apps the shell holds as running (a window open, or starting), as the
// property RunningApps of io.qactd.ShellExtension, its changes signalled: qactd does not export an
// app's entry for the first time while the app runs, since the shell would then find the app's ID
// resolving to another file and replace the app, leaving its open window on a second icon.
class RunningApps {
    constructor() {
        this._system = Shell.AppSystem.get_default();
        this._ids = this._current();
        this._object = Gio.DBusExportedObject.wrapJSObject(RUNNING_APPS_XML, this);
        this._object.export(Gio.DBus.session, OWN_PATH);
        this._stateChanged = this._system.connect('app-state-changed', () => {
            const ids = this._current();
            if (ids.join('\n') === this._ids.join('\n'))
                return;
            this._ids = ids;
            this._object.emit_property_changed('RunningApps', new GLib.Variant('as', ids));
        });
    }

    get RunningApps() {
        return this._ids;
    }

    _current() {
        return this._system.get_running().map(app => app.get_id()).filter(id => id).sort();
    }

    destroy() {
        this._system.disconnect(this._stateChanged);
        this._object.unexport();
    }
}

export default class QuickActionsExtension extends Extension {
    enable() {
        this._openMenus = new Set();
        // menu → its signal handler IDs, for every menu given a section
        this._menus = new Map();
        this._quicklists = new Quicklists(appId => {
            for (const menu of this._openMenus) {
                if (menu._app?.get_id() === appId)
                    this._fill(menu);
            }
        });
        this._runningApps = new RunningApps();
        const extension = this;
        const prototype = AppMenu.AppMenu.prototype;
        this._originalOpen = prototype.open;
        const originalOpen = this._originalOpen;
        prototype.open = function (animate) {
            extension._fill(this);
            originalOpen.call(this, animate);
        };
    }

    disable() {
        AppMenu.AppMenu.prototype.open = this._originalOpen;
        for (const [menu, handlers] of this._menus) {
            handlers.forEach(id => menu.disconnect(id));
            menu._qactdSection.destroy();
            delete menu._qactdSection;
        }
        this._menus = null;
        this._quicklists.destroy();
        this._quicklists = null;
        this._runningApps.destroy();
        this._runningApps = null;
        this._openMenus = null;
    }

    // The menu's section of quick actions (made after its actions the first time), filled with
    // the app's quicklist as it is now.
    _fill(menu) {
        let section = menu._qactdSection;
        if (!section) {
            section = new PopupMenu.PopupMenuSection();
            menu.addMenuItem(section, menu._getMenuItems().indexOf(menu._actionSection) + 1);
            menu._qactdSection = section;
            this._menus.set(menu, [
                menu.connect('open-state-changed', (openedMenu, open) => {
                    if (open)
                        this._openMenus.add(openedMenu);
                    else
                        this._openMenus.delete(openedMenu);
                }),
                menu.connect('destroy', () => {
                    this._openMenus.delete(menu);
                    this._menus.delete(menu);
                }),
            ]);
        }
        section.removeAll();
        const appId = menu._app?.get_id();
        if (!appId || !this._quicklists)
            return;
        for (const item of this._quicklists.items(appId)) {
            const menuItem = new PopupMenu.PopupImageMenuItem(item.label, item.icon);
            menuItem.connect('activate', (activated, event) => {
                this._quicklists.activate(appId, item.id, event?.get_time() ?? global.get_current_time());
                Main.overview.hide();
            });
            section.addMenuItem(menuItem);
        }
    }
}
