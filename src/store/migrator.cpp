#include "store/migrator.h"

#include "store/database.h"
#include "store/logging.h"
#include "store/session.h"

#include <QDir>
#include <QFile>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QVariant>

#include <algorithm>
#include <optional>

namespace {} // namespace

namespace outbox::store {

namespace {

using core::ErrorKind;

// Advisory lock key shared by every outboxctl/console that migrates
// ("outbox" in ASCII). Advisory locks are per database, which is exactly the
// scope of a schema migration.
constexpr qint64 kLockKey = 0x6F7574626F78;

const QString kResourceDir = QStringLiteral(":/sql");
const QString kRolesFile = QStringLiteral("roles.sql");
const QString kAggregateOrderFile = QStringLiteral("aggregate_order.sql");

struct Migration {
    int version = 0;
    QString fileName;
};

// The numbered migrations compiled into the binary, in order. The file
// names are fixed at build time, so a bad name is a packaging bug.
QList<Migration> availableMigrations() {
    static const QRegularExpression pattern(QStringLiteral("^(\\d{3})_[a-z0-9_]+\\.sql$"));
    QList<Migration> migrations;
    const QStringList files = QDir(kResourceDir).entryList(QDir::Files, QDir::Name);
    for (const QString &file : files) {
        const auto match = pattern.match(file);
        if (match.hasMatch()) {
            migrations.append({match.captured(1).toInt(), file});
        }
    }
    std::sort(migrations.begin(), migrations.end(),
              [](const Migration &a, const Migration &b) { return a.version < b.version; });
    return migrations;
}

core::Result<QString> readResource(const QString &fileName) {
    QFile file(kResourceDir + QLatin1Char('/') + fileName);
    if (!file.open(QIODevice::ReadOnly)) {
        return core::Error{ErrorKind::Failed,
                           QStringLiteral("migration %1 is missing from this build (%2) — "
                                          "reinstall Outbox Console")
                               .arg(fileName, file.errorString())};
    }
    return QString::fromUtf8(file.readAll());
}

core::Result<bool> versionTableExists(QSqlDatabase db) {
    auto query = exec(db, QStringLiteral("SELECT to_regclass('outbox_schema_version') IS NOT NULL"),
                      {}, QStringLiteral("reading the schema version"));
    if (!query.ok()) {
        return query.error();
    }
    if (!query->next()) {
        return core::Error{ErrorKind::Failed, QStringLiteral("reading the schema version: no row")};
    }
    return query->value(0).toBool();
}

core::Result<int> readVersion(QSqlDatabase db) {
    const auto exists = versionTableExists(db);
    if (!exists.ok()) {
        return exists.error();
    }
    if (!exists.value()) {
        return 0;
    }
    auto query =
        exec(db, QStringLiteral("SELECT coalesce(max(version), 0) FROM outbox_schema_version"), {},
             QStringLiteral("reading the schema version"));
    if (!query.ok()) {
        return query.error();
    }
    if (!query->next()) {
        return core::Error{ErrorKind::Failed, QStringLiteral("reading the schema version: no row")};
    }
    return query->value(0).toInt();
}

core::Error tooNew(int version) {
    return {ErrorKind::Conflict,
            QStringLiteral("database schema is version %1 but this outboxctl knows only up to %2: "
                           "upgrade Outbox Console")
                .arg(version)
                .arg(Migrator::latestVersion())};
}

// Inside a transaction: make sure the version table exists and return the
// version as of now.
core::Result<int> ensureVersionTable(QSqlDatabase db) {
    const auto exists = versionTableExists(db);
    if (!exists.ok()) {
        return exists.error();
    }
    if (!exists.value()) {
        const auto created = exec(db,
                                  QStringLiteral("CREATE TABLE outbox_schema_version ("
                                                 " version integer PRIMARY KEY,"
                                                 " name text NOT NULL,"
                                                 " applied_at timestamptz NOT NULL DEFAULT now())"),
                                  {}, QStringLiteral("creating outbox_schema_version"));
        if (!created.ok()) {
            return created.error();
        }
    }
    return readVersion(db);
}

// The roles other than the schema's owner and the migrating role that may
// create objects in the schema the outbox goes to (current_schema()), as
// SQL names ("PUBLIC" for everybody), and the schema's name; none on
// PostgreSQL 15's defaults. Such a role could plant a function whose
// signature matches a call in the SECURITY DEFINER functions better than the
// built-in, and have it run with the owner's rights.
struct SchemaWriters {
    QString schema;
    QString quotedSchema;
    QStringList roles;
};

core::Result<SchemaWriters> schemaWriters(QSqlDatabase db) {
    auto rows =
        exec(db,
             QStringLiteral(
                 "SELECT n.nspname, quote_ident(n.nspname), CASE WHEN a.grantee = 0 THEN 'PUBLIC'"
                 "                       ELSE quote_ident(r.rolname) END"
                 " FROM pg_namespace n"
                 " CROSS JOIN LATERAL aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a"
                 " LEFT JOIN pg_roles r ON r.oid = a.grantee"
                 " WHERE n.nspname = current_schema() AND a.privilege_type = 'CREATE'"
                 "   AND a.grantee <> n.nspowner"
                 "   AND a.grantee <> (SELECT oid FROM pg_roles WHERE rolname = current_user)"
                 " ORDER BY a.grantee <> 0, r.rolname"),
             {}, QStringLiteral("checking who may create objects in the outbox's schema"));
    if (!rows)
        return rows.error();
    SchemaWriters writers;
    while (rows->next()) {
        writers.schema = rows->value(0).toString();
        writers.quotedSchema = rows->value(1).toString();
        writers.roles << rows->value(2).toString();
    }
    return writers;
}

core::Result<void> checkSchemaWriters(QSqlDatabase db) {
    const auto writers = schemaWriters(db);
    if (!writers)
        return writers.error();
    if (writers->roles.isEmpty())
        return {};
    const QString roles = writers->roles.join(QStringLiteral(", "));
    return core::Error{
        ErrorKind::Invalid,
        QStringLiteral("the schema \"%1\" lets %2 create objects in it: a login that may create "
                       "objects there can plant a function that the outbox's SECURITY DEFINER "
                       "functions would run with the rights of the outbox's owner. Take the right "
                       "away as the schema's owner (REVOKE CREATE ON SCHEMA %3 FROM %2; PostgreSQL "
                       "15 does so for new databases, clusters created by 14 or older grant it to "
                       "PUBLIC), or put the outbox in a schema of its own (CREATE SCHEMA outbox; "
                       "connect with options='-c search_path=outbox'); then run `outboxctl "
                       "migrate` again")
            .arg(writers->schema, roles, writers->quotedSchema)};
}

// Serialises migrators on one database for the whole run. A session lock
// taken *before* each BEGIN, not pg_advisory_xact_lock inside it: a backend
// that waited for the lock inside a transaction would still look up tables
// in catalog caches from before the wait (invalidations are processed at
// transaction start), miss the version table another migrator just created
// and fail to create it again.
class MigrationLock final {
public:
    explicit MigrationLock(QSqlDatabase db)
        : m_db(std::move(db)) {}
    ~MigrationLock() {
        if (m_locked) {
            const auto unlocked =
                exec(m_db, QStringLiteral("SELECT pg_advisory_unlock(%1)").arg(kLockKey));
            if (!unlocked.ok()) {
                // The session ends with the connection, and the lock with it.
                qCWarning(lcStore) << "releasing the migration lock:" << unlocked.errorMessage();
            }
        }
    }
    Q_DISABLE_COPY_MOVE(MigrationLock)

    core::Result<void> acquire() {
        const auto locked =
            exec(m_db, QStringLiteral("SELECT pg_advisory_lock(%1)").arg(kLockKey), {},
                 QStringLiteral("waiting for other migrations of this database"));
        if (!locked.ok()) {
            return locked.error();
        }
        m_locked = true;
        return {};
    }

private:
    QSqlDatabase m_db;
    bool m_locked = false;
};

} // namespace

Migrator::Migrator(Session &session)
    : Migrator(session.database()) {}

Migrator::Migrator(QSqlDatabase db)
    : m_db(std::move(db)) {}

int Migrator::latestVersion() {
    const auto migrations = availableMigrations();
    return migrations.isEmpty() ? 0 : migrations.constLast().version;
}

core::Result<int> Migrator::currentVersion() const {
    return readVersion(m_db);
}

core::Result<Migrator::Report> Migrator::migrate(bool withRoles, bool dryRun) {
    std::optional<MigrationLock> lock;
    if (!dryRun) {
        lock.emplace(m_db);
        const auto locked = lock->acquire();
        if (!locked.ok()) {
            return locked.error();
        }
    }
    const auto current = currentVersion();
    if (!current.ok()) {
        return current.error();
    }
    if (current.value() > latestVersion()) {
        return tooNew(current.value());
    }
    // Also when there is nothing to apply: a database migrated before the
    // check learns it at the next run.
    if (const auto writable = checkSchemaWriters(m_db); !writable)
        return writable.error();

    Report report;
    report.fromVersion = current.value();
    report.toVersion = current.value();
    const auto migrations = availableMigrations();

    if (dryRun) {
        for (const Migration &migration : migrations) {
            if (migration.version > current.value()) {
                report.applied << migration.fileName;
                report.toVersion = migration.version;
            }
        }
        report.rolesApplied = withRoles;
        return report;
    }

    for (const Migration &migration : migrations) {
        if (migration.version <= report.toVersion) {
            continue;
        }
        const auto sql = readResource(migration.fileName);
        if (!sql.ok()) {
            return sql.error();
        }
        const QString context = QStringLiteral("applying migration %1").arg(migration.fileName);
        const auto result = inTransaction(m_db, context, [&]() -> core::Result<void> {
            const auto version = ensureVersionTable(m_db);
            if (!version.ok()) {
                return version.error();
            }
            if (version.value() >= migration.version) {
                // Only possible if someone migrated without the lock.
                return core::Error{
                    ErrorKind::Conflict,
                    QStringLiteral("%1: the database changed to version %2 during the "
                                   "migration — run `outboxctl migrate` again")
                        .arg(context)
                        .arg(version.value())};
            }
            // Not "NOTICE: trigger ... does not exist, skipping" and the like
            // from the scripts' IF EXISTS on every migrate; warnings still show.
            if (const auto quiet = exec(
                    m_db, QStringLiteral("SET LOCAL client_min_messages = warning"), {}, context);
                !quiet)
                return quiet.error();
            const auto ran = execScript(m_db, sql.value(), context);
            if (!ran.ok()) {
                return ran.error();
            }
            const auto recorded =
                exec(m_db,
                     QStringLiteral("INSERT INTO outbox_schema_version (version, name) "
                                    "VALUES (?, ?)"),
                     {migration.version, migration.fileName}, context);
            if (!recorded.ok()) {
                return recorded.error();
            }
            return {};
        });
        if (!result.ok()) {
            return result.error();
        }
        report.toVersion = migration.version;
        report.applied << migration.fileName;
        qCInfo(lcStore) << "applied migration" << migration.fileName;
    }

    if (withRoles) {
        const auto sql = readResource(kRolesFile);
        if (!sql.ok()) {
            return sql.error();
        }
        const QString context = QStringLiteral("applying %1").arg(kRolesFile);
        const auto result =
            inTransaction(m_db, context, [&]() { return execScript(m_db, sql.value(), context); });
        if (!result.ok()) {
            return result.error();
        }
        report.rolesApplied = true;
        qCInfo(lcStore) << "applied" << kRolesFile;
    }
    return report;
}

core::Result<void> Migrator::checkCurrent() const {
    const auto current = currentVersion();
    if (!current.ok()) {
        return current.error();
    }
    const int latest = latestVersion();
    if (current.value() == latest) {
        return {};
    }
    if (current.value() > latest) {
        return tooNew(current.value());
    }
    if (current.value() == 0) {
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("the database has no outbox schema: run `outboxctl "
                           "migrate` (add --with-roles to create the outbox_* roles)")};
    }
    return core::Error{
        ErrorKind::Invalid,
        QStringLiteral("database schema is version %1 but this outboxctl needs version "
                       "%2: run `outboxctl migrate`")
            .arg(current.value())
            .arg(latest)};
}

core::Result<bool> Migrator::aggregateOrderOn() const {
    auto on = execOneRow(m_db, QStringLiteral("SELECT outbox_aggregate_order_on()"), {},
                         QStringLiteral("reading whether delivery in aggregate order is on"));
    if (!on)
        return on.error();
    return on->value(0).toBool();
}

core::Result<void> Migrator::checkAggregateOrder() const {
    const auto on = aggregateOrderOn();
    if (!on)
        return on.error();
    if (on.value())
        return {};
    return core::Error{
        ErrorKind::Invalid,
        QStringLiteral("delivery in aggregate order is off for this database (it has no valid "
                       "outbox_events_aggregate_idx and outbox_events_ordered_claim_idx): run "
                       "`outboxctl migrate "
                       "--aggregate-order` as the schema's owner, which builds it without "
                       "blocking producers, or deliver without aggregate order")};
}

core::Result<bool> Migrator::enableAggregateOrder() {
    // Two at once: the second waits, then finds it on.
    MigrationLock lock(m_db);
    if (const auto locked = lock.acquire(); !locked)
        return locked.error();
    const auto current = checkCurrent();
    if (!current)
        return current.error();
    const auto on = aggregateOrderOn();
    if (!on || on.value())
        return on ? core::Result<bool>(false) : core::Result<bool>(on.error());
    const auto sql = readResource(kAggregateOrderFile);
    if (!sql)
        return sql.error();
    const QString context = QStringLiteral("building the indexes of aggregate order");
    // No statement limit: each build reads the whole table, and waits for the
    // transactions that were running when it started.
    QStringList statements{QStringLiteral("SELECT set_config('statement_timeout', '0', false)")};
    static const QRegularExpression createIndex(QStringLiteral("CREATE INDEX CONCURRENTLY (\\w+)"));
    const QStringList script = splitSqlScript(sql.value());
    for (const QString &statement : script) {
        if (const auto index = createIndex.match(statement); index.hasMatch()) {
            // A valid index is kept; one an interrupted build left invalid
            // is built again.
            const QString name = index.captured(1);
            auto state = execOneRow(m_db,
                                    QStringLiteral("SELECT to_regclass(?) IS NOT NULL, coalesce("
                                                   "(SELECT indisvalid FROM pg_index"
                                                   " WHERE indexrelid = to_regclass(?)), false)"),
                                    {name, name}, context);
            if (!state)
                return state.error();
            if (state->value(1).toBool())
                continue;
            if (state->value(0).toBool())
                statements << QStringLiteral("DROP INDEX CONCURRENTLY ") + name;
        }
        statements << statement;
    }
    for (const QString &statement : std::as_const(statements)) {
        if (const auto ran = exec(m_db, statement, {}, context); !ran)
            return ran.error();
    }
    const auto built = aggregateOrderOn();
    if (!built)
        return built.error();
    if (!built.value())
        return core::Error{ErrorKind::Failed,
                           context + QStringLiteral(": the indexes were built but are not valid "
                                                    "— run `outboxctl migrate --aggregate-order` "
                                                    "again")};
    qCInfo(lcStore) << "built the indexes of aggregate order";
    return true;
}

} // namespace outbox::store
