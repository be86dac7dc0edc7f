#include "store/fleetfile.h"

#include <QFile>
#include <QSet>
#include <QStringList>

#include <optional>

namespace outbox::store {

namespace {

core::Error fleetError(const QString &fileName, int line, const QString &message) {
    return core::Error{core::ErrorKind::Invalid,
                       QStringLiteral("%1:%2: %3").arg(fileName).arg(line).arg(message)};
}

struct Section {
    FleetEntry entry;
    int line = 0;
    QString conninfo;
    QString service;
    int conninfoLine = 0;
};

core::Result<FleetEntry> finish(const Section &s, const QString &fileName) {
    if (s.conninfo.isEmpty() == s.service.isEmpty()) {
        return fleetError(fileName, s.line,
                          s.conninfo.isEmpty()
                              ? QStringLiteral("the database \"%1\" names no server: add "
                                               "\"conninfo = host=... dbname=...\" or "
                                               "\"service = NAME\"")
                                    .arg(s.entry.name)
                              : QStringLiteral("the database \"%1\" has both conninfo and "
                                               "service: keep one of them")
                                    .arg(s.entry.name));
    }
    const QString text = s.service.isEmpty() ? s.conninfo : QStringLiteral("service=") + s.service;
    auto info = core::ConnInfo::parse(text);
    if (!info) {
        return fleetError(fileName, s.conninfoLine,
                          QStringLiteral("the connection of \"%1\" is not valid: %2")
                              .arg(s.entry.name, info.errorMessage()));
    }
    if (!info->password.isEmpty()) {
        return fleetError(fileName, s.conninfoLine,
                          QStringLiteral("the connection of \"%1\" holds a password, and a fleet "
                                         "file is meant to be shared: remove it and keep the "
                                         "password in ~/.pgpass or a service file")
                              .arg(s.entry.name));
    }
    FleetEntry entry = s.entry;
    entry.target = info.value();
    return entry;
}

} // namespace

core::Result<QList<FleetEntry>> parseFleet(const QString &text, const QString &fileName) {
    QList<FleetEntry> entries;
    QSet<QString> names;
    std::optional<Section> current;
    const auto close = [&]() -> core::Result<void> {
        if (!current) {
            return {};
        }
        auto entry = finish(*current, fileName);
        if (!entry) {
            return entry.error();
        }
        entries.append(entry.value());
        current.reset();
        return {};
    };
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
        const int lineNo = i + 1;
        const QString line = lines[i].trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')) ||
            line.startsWith(QLatin1Char(';'))) {
            continue;
        }
        if (line.startsWith(QLatin1Char('['))) {
            if (!line.endsWith(QLatin1Char(']'))) {
                return fleetError(fileName, lineNo,
                                  QStringLiteral("a section starts with '[' and ends with ']': "
                                                 "write [name]"));
            }
            auto closed = close();
            if (!closed) {
                return closed.error();
            }
            const QString name = line.mid(1, line.size() - 2).trimmed();
            if (name.isEmpty()) {
                return fleetError(fileName, lineNo,
                                  QStringLiteral("a database needs a name: write [name]"));
            }
            if (names.contains(name)) {
                return fleetError(fileName, lineNo,
                                  QStringLiteral("the name \"%1\" is used twice: give each "
                                                 "database its own name")
                                      .arg(name));
            }
            names.insert(name);
            current = Section{};
            current->entry.name = name;
            current->line = lineNo;
            continue;
        }
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        if (eq <= 0) {
            return fleetError(fileName, lineNo,
                              QStringLiteral("expected \"key = value\" or \"[name]\", found "
                                             "\"%1\"")
                                  .arg(line.left(40)));
        }
        if (!current) {
            return fleetError(fileName, lineNo,
                              QStringLiteral("\"%1\" comes before any database: start each "
                                             "database with a [name] line")
                                  .arg(line.left(eq).trimmed()));
        }
        const QString key = line.left(eq).trimmed().toLower();
        const QString value = line.mid(eq + 1).trimmed();
        if (key == QLatin1String("conninfo")) {
            current->conninfo = value;
            current->conninfoLine = lineNo;
        } else if (key == QLatin1String("service")) {
            current->service = value;
            current->conninfoLine = lineNo;
        } else if (key == QLatin1String("group")) {
            current->entry.group = value;
        } else if (key == QLatin1String("owner")) {
            current->entry.owner = value;
        } else if (key == QLatin1String("password")) {
            return fleetError(fileName, lineNo,
                              QStringLiteral("a fleet file is meant to be shared and holds no "
                                             "password: keep it in ~/.pgpass or a service file"));
        } else {
            return fleetError(fileName, lineNo,
                              QStringLiteral("unknown key \"%1\": the keys are conninfo, "
                                             "service, group and owner")
                                  .arg(key));
        }
        if (value.isEmpty()) {
            return fleetError(fileName, lineNo,
                              QStringLiteral("\"%1\" has no value: write \"%1 = ...\" or remove "
                                             "the line")
                                  .arg(key));
        }
    }
    auto closed = close();
    if (!closed) {
        return closed.error();
    }
    if (entries.isEmpty()) {
        return fleetError(fileName, qMax<qsizetype>(lines.size(), 1),
                          QStringLiteral("the fleet names no database: add a [name] section "
                                         "with a conninfo or service line"));
    }
    return entries;
}

core::Result<QList<FleetEntry>> readFleetFile(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        return core::Error{core::ErrorKind::Invalid,
                           QStringLiteral("cannot read the fleet file %1: %2; check the path")
                               .arg(path, file.errorString())};
    }
    return parseFleet(QString::fromUtf8(file.readAll()), path);
}

} // namespace outbox::store
