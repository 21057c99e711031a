import Varlink

/// The `io.qactd.QuickActions` interface: the daemon's control socket API, for the app, the
/// launcher and `qactl`.
/// Served verbatim by `org.varlink.service.GetInterfaceDescription`, so every Varlink client
/// (the Python `varlink` package included) can list and call it.
public enum QuickActionsInterface {
    /// `io.qactd.QuickActions`.
    public static let name = "io.qactd.QuickActions"

    /// The interface as a Varlink service lists and serves it.
    public static let varlinkInterface = VarlinkServiceInfo.Interface(name: name, description: description)

    public static let description = """
        # Home Screen quick actions for a Linux contacts app: static items from a
        # property list plus one dynamic item per favorite contact, recomputed when
        # the app resigns active. String parameters are bounded (appVersion and
        # language 256 bytes, types, identifiers and tokens 1024 bytes): a longer one,
        # like a number that is no integer of its range, is refused with
        # org.varlink.service.InvalidParameter naming it.
        interface io.qactd.QuickActions

        # An item's icon: a system icon type (e.g. "compose"), a symbol name
        # (e.g. "star.fill"), a name of the icon theme (themed, e.g.
        # "document-open-recent") or an image file's absolute path.
        type Icon (
          kind: (system, symbol, themed, file),
          name: string
        )

        # One quick action, as UIApplicationShortcutItem describes it.
        type Item (
          # Identifies the kind of action; favorites use the configured favorite type.
          type: string,
          # The user-visible title.
          title: string,
          subtitle: ?string,
          icon: ?Icon,
          # Property-list values; favorites carry contactIdentifier and appVersion.
          userInfo: ?object
        )

        # An item with where it came from and whether the launcher shows it.
        type ListedItem (
          item: Item,
          source: (static, dynamic),
          # Whether the item is within the display limit.
          displayed: bool,
          # 1-based position in the full list (static items first).
          position: int,
          # How much the item was used; absent when it never was.
          usage: ?Usage
        )

        # Each time an item is chosen adds 1 to its score, halved every 14 days
        # since: score is the score at lastUsed (seconds since 1970), which a
        # client halves once per 14 days after it for the score now.
        type Usage (
          score: float,
          lastUsed: int
        )

        # A contact from the contacts directory.
        type Contact (
          # The vCard UID, else the file name without its extension.
          identifier: string,
          name: string,
          # The preferred email, else the first.
          email: ?string,
          emails: []string,
          favorite: bool
        )

        # A contact file that was skipped, and why.
        type InvalidFile (
          path: string,
          reason: string
        )

        # Health of the contacts directory watcher.
        type WatchHealth (
          # "watching", "degraded" (some trees fall back to periodic rescans) or
          # "reattaching" (the contacts folder is missing; waiting for it to appear).
          state: string,
          # Trees that could not be watched with inotify and are rescanned periodically.
          degradedTrees: []string,
          message: ?string,
          # Files changed on disk but still open for writing by some process: read once
          # the last writer closes them (oldest first, at most 32 listed).
          waitingForWriter: []WriterWait,
          waitingForWriterCount: int,
          # A scan of the contacts folder still under way after a second (a rescan
          # after an inotify overflow, on Reload or when the folder reappears).
          scan: ?ScanProgress
        )

        # How far a scan is: phase "listing" (the tree is walked; filesFound so far,
        # filesTotal not known yet) or "reading" (filesRead of filesTotal read).
        type ScanProgress (
          tree: string,
          phase: string,
          filesFound: int,
          filesRead: int,
          filesTotal: ?int
        )

        # A contact file waiting for its writer to close it; since: ISO 8601, UTC.
        type WriterWait (path: string, since: string)

        # What the defaults chose and why. desktopFile is [Launcher] DesktopFile= as
        # written (auto: the default mail app of mimeapps.list); app the desktop-file
        # ID served and appEntry its entry; chosenBy "default-application",
        # "added-association" (of mimeappsList) or "mime-type" (the entry's
        # MimeType=); problem why no app, or why it gives a favorite no command;
        # favoriteAction the command a chosen favorite runs, and favoriteActionFrom
        # "configuration", "app-exec" (the app's Exec with a mailto: URI) or "none";
        # recompute is [Shortcuts] Recompute=, followingContacts whether the set
        # follows the contacts now; evolution is [Contacts] Evolution=.
        type Choices (
          desktopFile: string,
          app: ?string,
          appEntry: ?string,
          chosenBy: ?string,
          mimeappsList: ?string,
          problem: ?string,
          favoriteAction: ?string,
          favoriteActionFrom: string,
          recompute: string,
          followingContacts: bool,
          evolution: string
        )

        # How commands ([Actions] and the LaunchCommand) are started: start is "unit"
        # (each in a transient unit of the user manager, reached at manager) or
        # "direct" (as the daemon's children: message says why); running counts the
        # [Actions] commands running now, limit is [Commands] MaxRunning=.
        type Commands (start: string, manager: ?string, message: ?string, running: int, limit: int)

        # Desktop notifications of failures ([Feedback] Notifications=): state is
        # "off", "idle" (nothing failed yet), "on" (the last one was shown) or
        # "unavailable" (it could not be: message says why); shown counts them.
        type Notifications (state: string, message: ?string, shown: int)

        # qactd's GNOME Shell extension as the shell on the session bus reports it:
        # state is "not-installed", "disabled", "active", "error", "out-of-date" or
        # "other"; shellState is the shell's own number (1 active, 2 inactive, 3 error,
        # 4 out of date, ...), message the shell's error, enable the one command that
        # turns it on (while it is installed and not active).
        type ShellExtension (
          uuid: string,
          state: string,
          shellState: ?int,
          message: ?string,
          enable: ?string
        )

        # The live quicklist on the session bus (DynamicItems=auto or quicklist): state is
        # "off" (message says why), "waiting" (the bus cannot be reached; retried)
        # or "on"; busName and objectPath are where docks read the dbusmenu menu;
        # readers, who shows it (a bus name and its program; with DynamicItems=auto the
        # desktop entry holds the favorites only while there is none).
        type Quicklist (
          state: string,
          message: ?string,
          busAddress: ?string,
          busName: ?string,
          objectPath: ?string,
          applicationURI: ?string,
          items: int,
          readers: ?[]string
        )

        # The per-user desktop entry kept with the quick actions ([Launcher] DesktopFile=),
        # in qactd's exports folder: the file, the app's own entry it was made from, when it
        # was last written (ISO 8601, UTC), why it is not up to date and why launchers may
        # not see it (the exports folder is not on XDG_DATA_DIRS), while that lasts.
        type DesktopEntryExport (
          path: string,
          source: ?string,
          written: ?string,
          problem: ?string,
          notice: ?string
        )

        # The Evolution Data Server address books read for contacts ([Contacts]
        # Evolution=): selection is "all" or the UIDs configured, folder where the local
        # ones are looked for, cacheFolder where those of online accounts and servers
        # are, problem why none is read (while that lasts).
        type Evolution (
          selection: string,
          folder: string,
          problem: ?string,
          books: []AddressBook,
          cacheFolder: ?string
        )

        # The address books khard's configuration names (configFile, followed as it
        # changes), read besides the contacts folder ([Contacts] Khard=auto): problem
        # why the file cannot be read, naming its line (the books it named before are
        # still followed).
        type Khard (
          configFile: string,
          problem: ?string,
          books: []KhardBook
        )

        # One of khard's address books: its name in khard.conf, its folder, state
        # watching, degraded, reattaching (the folder is missing) or skipped, and what
        # is wrong with it while that lasts.
        type KhardBook (
          name: string,
          folder: string,
          state: string,
          problem: ?string
        )

        # One address book: contacts and favorites it contributes, rows whose vCard
        # does not parse, and what is wrong with it while that lasts. indexing is true
        # just after start-up while its contacts other than the favorites and the pinned
        # ones are still being indexed (the set is complete; contacts is not yet).
        # kind is local or the backend of an online account's or a server's book
        # (carddav, google, webdav, ...), account the online account it belongs
        # to, skipped why it is not read (its source or account is disabled), name
        # the book's own display name in Evolution Data Server's registry.
        type AddressBook (
          uid: string,
          database: string,
          contacts: int,
          favorites: int,
          invalidCards: int,
          problem: ?string,
          indexing: ?bool,
          kind: ?string,
          account: ?string,
          skipped: ?string,
          name: ?string
        )

        # An item pinned as a launcher of its own: a desktop entry
        # <app-id>.pinned.<identifier>.desktop beside the exported entry (desktopFile,
        # absent while there is no folder to write to). identifier is made from the
        # item's type and contact identifier, so it stays the same across renames and
        # restarts. disabled: the item is gone (its contact removed, its static item
        # dropped); choosing the launcher shows message and triggers nothing, until
        # the item comes back.
        type PinnedItem (
          identifier: string,
          item: Item,
          state: (enabled, disabled),
          message: ?string,
          desktopFile: ?string
        )

        # The daemon's configuration, counters and health.
        method Status() -> (
          version: string,
          configFile: ?string,
          contactsDirectory: string,
          staticItemsFile: string,
          stateFile: string,
          socket: string,
          contacts: int,
          favorites: int,
          invalidFiles: []InvalidFile,
          # Contacts skipped because an earlier file has the same identifier.
          duplicates: int,
          generation: int,
          # Whether the app has sent its first lifecycle message.
          launched: bool,
          appVersion: string,
          appConnected: bool,
          staticItems: int,
          dynamicItems: int,
          watch: WatchHealth,
          rescans: int,
          eventsHandled: int,
          filesParsed: int,
          # Trigger counts per item type (favorites as "type/contactIdentifier").
          usage: [string]int,
          # Why the last state write failed, while it keeps failing (it is retried
          # with a growing delay, at most 30 s apart, and at each change).
          stateError: ?string,
          # Whether the state file holds the current state; false while writes fail,
          # and for the few milliseconds after a change until it is written.
          persisted: bool,
          # While persisted is false: the generation the state file still holds.
          savedGeneration: ?int,
          # The item waiting for the app's next Connect, if any.
          pendingLaunchItem: ?Item,
          # Open Watch streams.
          watchers: int,
          # Absent when DesktopFile= is empty.
          desktopEntry: ?DesktopEntryExport,
          quicklist: ?Quicklist,
          notifications: ?Notifications,
          # Absent when [Contacts] Evolution=none.
          evolution: ?Evolution,
          # The app this instance serves (qactd --app NAME, qactd@NAME.service);
          # absent for the plain qactd.
          app: ?string,
          commands: ?Commands,
          # What the defaults chose and why.
          choices: ?Choices,
          # Absent when [Contacts] Khard=none.
          khard: ?Khard,
          # Absent outside GNOME Shell (no org.gnome.Shell on the session bus).
          shellExtension: ?ShellExtension
        )

        # The quick actions: the displayed ones, or with all every item marked
        # displayed or not. limit overrides the configured display limit. Static
        # titles and subtitles are translated into language (fr, fr_CA.UTF-8, or
        # a LANGUAGE-style list such as fr_CA:fr), else into the daemon's language.
        method List(all: ?bool, limit: ?int, language: ?string) -> (
          generation: int,
          launched: bool,
          items: []ListedItem
        )

        # The app resigns active: recompute the dynamic items from the favorites.
        # changed is false when the set was already current (nothing is written).
        # The reply comes once the state file holds the result (persisted), or once
        # writing it failed (disk full, read-only: persisted is false, the new set is
        # served from memory, and the write is retried).
        method ResignActive(appVersion: ?string) -> (
          changed: bool,
          generation: int,
          dynamicCount: int,
          persisted: bool
        )

        # The app became active (lifecycle bookkeeping; marks the app launched).
        method BecomeActive(appVersion: ?string) -> ()

        # The app entered the background (lifecycle bookkeeping).
        method EnterBackground() -> ()

        # The user picked an item: by displayed position (1-based), or by type
        # (plus contactIdentifier for a favorite), or a pinned launcher by its pin
        # identifier (pinned). Give exactly one of position, type and pinned;
        # otherwise org.varlink.service.InvalidParameter names "position". A
        # disabled pin fails with PinDisabled (and a notification says why).
        method Trigger(position: ?int, type: ?string, contactIdentifier: ?string, pinned: ?string) -> (
          item: Item,
          contact: ?Contact,
          # running: delivered to the connected app; launch: kept as the pending
          # launch item and handed over when the app connects; command: the item's
          # type has an [Actions] command, which the daemon ran instead.
          delivery: (running, launch, command),
          # Whether the app reported the action as handled.
          handled: bool,
          # The item was made for another app version than the current one.
          stale: bool,
          position: ?int,
          # running: the token the action was delivered with.
          token: ?string,
          # launch: what became of the LaunchCommand. alreadyRunning: the process an
          # earlier trigger started has not connected yet; it gets this newer item.
          launchStatus: ?(started, alreadyRunning, failed, notConfigured),
          launchPID: ?int,
          # launch: the user manager's unit the app was started in (then no pid).
          launchUnit: ?string,
          launchError: ?string,
          # command: the program, and its pid (started directly) or its unit (started
          # as a transient unit of the user manager) once started, or why it could not
          # start (its end is logged with the item, and a failure shown as a notification).
          commandProgram: ?string,
          commandPID: ?int,
          commandUnit: ?string,
          commandError: ?string
        )

        # The app process connects (call with more; marks the app launched). The
        # first reply carries the pending launch item, if any, exactly once; each
        # later reply is one action to perform, with a token to pass to Complete
        # (from another connection: this one is busy with the stream). Closing the
        # connection disconnects the app. There is one app: a newer Connect takes
        # over and this stream ends with AppReplaced.
        method Connect(appVersion: ?string) -> (
          pendingItem: ?Item,
          action: ?Item,
          contact: ?Contact,
          token: ?string,
          stale: ?bool
        )

        # The app's answer to an action delivered through Connect; the waiting
        # Trigger replies with handled. NoSuchAction when nobody waits for the token.
        method Complete(token: string, handled: bool) -> ()

        # Follow the quick-action set (call with more): the current set, then one
        # reply per change. A slow watcher may skip generations and get the latest.
        # Static titles and subtitles are in the daemon's language.
        method Watch() -> (
          generation: int,
          launched: bool,
          items: []ListedItem
        )

        # Re-read the configuration and the static items (same as SIGHUP).
        method Reload() -> (
          staticItems: int,
          configFile: ?string
        )

        # Look up one contact by identifier.
        method GetContact(identifier: string) -> (contact: Contact)

        # Pin one displayed item as a launcher of its own: by displayed position
        # (1-based) or by type (plus contactIdentifier), as Trigger names it. Pinning
        # an item again refreshes its pin. PinningUnavailable when DesktopFile= is
        # empty (there is no app to pin for).
        method Pin(position: ?int, type: ?string, contactIdentifier: ?string) -> (pin: PinnedItem)

        # Remove one pin and its launcher, by identifier or by its 1-based position
        # in Pins, or every pin with all.
        method Unpin(identifier: ?string, position: ?int, all: ?bool) -> (removed: []string)

        # The pins, in the order they were made.
        method Pins() -> (pins: []PinnedItem)

        # The app publishes quick actions of its own (as iOS's shortcutItems and
        # Android's ShortcutManager). They are shown after the static items and before
        # the favorites, every one as a dynamic item, all cut at DisplayLimit=; a pick
        # reaches the app as any item does (its Connect stream, or at launch). Each
        # item's type is its identity among them. Checked when they arrive: type and
        # title non-empty, type, title and subtitle at most 1024 bytes without control
        # characters, a symbol or themed icon name of at most 255 ASCII letters, digits,
        # ".", "_", "-" and "+", a file icon an absolute path, userInfo at most 16 KiB
        # without the favorites' contactIdentifier key, at most MaxAppItems= items
        # (15) of distinct types. A refused call changes nothing. Each call marks the
        # app launched. The reply comes once the state file holds the change
        # (persisted), as ResignActive's does.

        # Replace the app's own items with these, in this order.
        method SetItems(items: []Item) -> (
          # Whether the list differs from the one before.
          changed: bool,
          generation: int,
          # How many items of its own the app has now.
          count: int,
          # The types removed (RemoveItems), or that made room for a pushed item.
          removed: []string,
          persisted: bool
        )

        # Put one item first; an item of its type is replaced, and at MaxAppItems= the
        # last one makes room (its type is in removed).
        method PushItem(item: Item) -> (changed: bool, generation: int, count: int, removed: []string, persisted: bool)

        # Remove the app's items of these types; a type it does not have is passed over.
        method RemoveItems(types: []string) -> (changed: bool, generation: int, count: int, removed: []string, persisted: bool)

        # The app did what its item of this type does (its own menu, not a pick):
        # counted as a pick is, in Status's usage. NoSuchItem when it has none.
        method ReportItemUsed(type: string) -> ()

        # The app's own items, as it set them.
        method Items() -> (items: []Item)

        # No item matches the trigger.
        error NoSuchShortcut (message: string)

        # The favorite's contact is no longer in the contacts directory.
        error ContactRemoved (contactIdentifier: string, message: string)

        # No contact has this identifier.
        error ContactNotFound (identifier: string)

        # The connected app did not answer within the response timeout.
        error AppNotResponding (timeoutSeconds: int)

        # The app's Connect stream ended while the action was in flight (the app quit
        # or a newer app process took over); the action is not delivered again.
        error AppDisconnected (token: string)

        # A newer app process called Connect; this Connect stream ends.
        error AppReplaced (message: string)

        # Complete named a token no Trigger waits for (unknown, answered or timed out).
        error NoSuchAction (token: string)

        # The item's [Actions] command was not run: a contact's field would begin an
        # argument with "-" (an option), or holds a NUL.
        error CommandRefused (message: string)

        # No pin has this identifier (or position).
        error NoSuchPin (identifier: string)

        # The pinned item is gone (its contact removed, its static item dropped): nothing
        # was triggered; message is what the notification said.
        error PinDisabled (identifier: string, message: string)

        # Nothing can be pinned: DesktopFile= is empty.
        error PinningUnavailable (message: string)

        # An item of the app's own breaks a rule: field names it as the call spelled it
        # (items[2].title, item.icon.name), message says which rule.
        error InvalidItem (field: string, message: string)

        # More items than MaxAppItems= were set.
        error TooManyItems (count: int, maxItems: int)

        # The app has no item of its own of this type.
        error NoSuchItem (type: string)

        # The configuration or the static items file is invalid.
        error InvalidConfiguration (message: string)

        # The peer sent something that is not a Varlink call; the connection is closed.
        error InvalidMessage (reason: string)

        # A message exceeded the size limit; the connection is closed.
        error MessageTooLarge (maxBytes: int)

        # The daemon is at its connection limit; the connection is closed.
        error TooManyConnections (maxConnections: int)

        # The daemon failed unexpectedly while answering.
        error InternalError (message: string)

        """
}
