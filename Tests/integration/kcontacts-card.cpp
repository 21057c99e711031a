// Writes one contact as KDE's own library writes it: KContacts' VCardConverter, the code
// KAddressBook saves a contact of its default address book (a vCard folder) with, in vCard 3.0,
// saved with QSaveFile as Qt programs save files (on Linux an unnamed O_TMPFILE file, linked
// into the folder when committed).
//
//   kcontacts-card OUTPUT UID NAME EMAIL [CATEGORY...]
//
// The categories are what KAddressBook's contact editor calls "Categories".
#include <KContacts/Addressee>
#include <KContacts/Email>
#include <KContacts/VCardConverter>
#include <QCoreApplication>
#include <QSaveFile>
#include <QStringList>
#include <cstdio>

int main(int argc, char **argv)
{
    QCoreApplication application(argc, argv);
    const QStringList arguments = application.arguments();
    if (arguments.size() < 5) {
        std::fprintf(stderr, "usage: kcontacts-card OUTPUT UID NAME EMAIL [CATEGORY...]\n");
        return 2;
    }
    KContacts::Addressee contact;
    contact.setUid(arguments[2]);
    contact.setNameFromString(arguments[3]);
    contact.setFormattedName(arguments[3]);
    KContacts::Email email(arguments[4]);
    email.setPreferred(true);
    contact.addEmail(email);
    contact.setCategories(arguments.mid(5));
    KContacts::VCardConverter converter;
    const QByteArray card = converter.exportVCard(contact, KContacts::VCardConverter::v3_0);
    QSaveFile file(arguments[1]);
    if (!file.open(QIODevice::WriteOnly) || file.write(card) != card.size() || !file.commit()) {
        std::fprintf(stderr, "kcontacts-card: cannot write %s\n", qPrintable(arguments[1]));
        return 1;
    }
    return 0;
}
