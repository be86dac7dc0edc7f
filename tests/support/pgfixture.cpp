#include "support/pgfixture.h"

#include "core/conninfo.h"
#include "store/database.h"
#include "store/migrator.h"

#include <QSqlError>
#include <QSqlQuery>

namespace outbox::testing {

namespace {

QString quoteIdent(const QString &name) {
    QString escaped = name;
    escaped.replace(QLatin1Char('"'), QLatin1String("\"\""));
    return QLatin1Char('"') + escaped + QLatin1Char('"');
}

bool runQuery(QSqlQuery &query, const QString &sql, const QVariantList &values) {
    // QPSQL prepares server-side (PREPARE ... AS), which only takes DML and
    // SELECT: run statements without values directly.
    bool ok = false;
    if (values.isEmpty()) {
        ok = query.exec(sql);
    } else if (query.prepare(sql)) {
        for (const QVariant &value : values)
            query.addBindValue(value);
        ok = query.exec();
    }
    if (!ok)
        qWarning().noquote() << "SQL failed:" << query.lastError().text() << "in" << sql;
    return ok;
}

} // namespace

PgFixture::PgFixture() = default;

PgFixture::~PgFixture() {
    const QStringList connections = m_connections;
    for (const QString &name : connections)
        close(name);
    // m_cluster's destructor stops the server and removes its directory.
}

core::Result<void> PgFixture::start(const devtools::EmbeddedPostgres::Options &options) {
    core::Result<void> started = m_cluster.start(options);
    if (!started)
        return core::Result<void>::failure(
            started.errorKind(), QStringLiteral("The test PostgreSQL cluster could not start: ") +
                                     started.errorMessage());
    m_adminConnection = nextName("pgfixture-admin");
    return {};
}

bool PgFixture::isStarted() const {
    return m_cluster.isRunning();
}

QString PgFixture::nextName(const char *prefix) {
    // The address keeps names apart when several fixtures live in one process.
    return QStringLiteral("%1-%2-%3")
        .arg(QLatin1String(prefix))
        .arg(quintptr(this), 0, 16)
        .arg(++m_counter);
}

bool PgFixture::adminExec(const QString &sql) {
    if (m_adminConnection.isEmpty()) {
        qWarning("PgFixture: start() the fixture first");
        return false;
    }
    // Twice at most: after a server restart (fault tests) the kept admin
    // connection is dead; reopen it once and run the statement again.
    for (int round = 0; round < 2; ++round) {
        const bool reopen = round > 0 || !QSqlDatabase::database(m_adminConnection, false).isOpen();
        QSqlDatabase admin = reopen ? open(QStringLiteral("postgres"), m_adminConnection)
                                    : QSqlDatabase::database(m_adminConnection, false);
        if (reopen) {
            // Quiet the NOTICEs of DROP ... IF EXISTS in the test output.
            if (!admin.isOpen() ||
                !sqlExec(admin, QStringLiteral("SET client_min_messages = warning")))
                return false;
        }
        QSqlQuery query(admin);
        if (runQuery(query, sql, {}))
            return true;
        QSqlQuery probe(admin);
        if (probe.exec(QStringLiteral("SELECT 1")))
            return false; // the statement failed, not the connection
    }
    return false;
}

QString PgFixture::freshDatabase() {
    const QString name = QStringLiteral("t%1").arg(m_counter + 1);
    ++m_counter;
    if (!adminExec(QStringLiteral("CREATE DATABASE ") + quoteIdent(name)))
        return {};
    return name;
}

void PgFixture::setTemplatePreparer(TemplatePreparer preparer) {
    m_preparer = std::move(preparer);
}

QString PgFixture::freshMigratedDatabase() {
    const QString templ = QLatin1String(templateDatabase);
    if (!m_templateReady && m_templateError.isEmpty()) {
        if (!m_preparer) {
            m_templateError = QStringLiteral("no template preparer was set");
        } else if (!adminExec(QStringLiteral("DROP DATABASE IF EXISTS ") + quoteIdent(templ)) ||
                   !adminExec(QStringLiteral("CREATE DATABASE ") + quoteIdent(templ))) {
            m_templateError = QStringLiteral("could not create the template database");
        } else if (const core::Result<void> prepared = m_preparer(connInfo(templ)); !prepared) {
            m_templateError = prepared.errorMessage();
        } else if (
            // A copy needs the template without sessions; a leaked preparer
            // connection would make every CREATE DATABASE wait and fail.
            !adminExec(QStringLiteral("ALTER DATABASE %1 WITH ALLOW_CONNECTIONS false "
                                      "IS_TEMPLATE true")
                           .arg(quoteIdent(templ))) ||
            !adminExec(QStringLiteral("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                      "WHERE datname = '%1'")
                           .arg(templ))) {
            m_templateError = QStringLiteral("could not seal the template database");
        } else {
            m_templateReady = true;
        }
    }
    if (!m_templateReady) {
        qWarning().noquote() << "PgFixture: the migrated template is unavailable:"
                             << m_templateError;
        return {};
    }
    const QString name = QStringLiteral("m%1").arg(m_counter + 1);
    ++m_counter;
    if (!adminExec(QStringLiteral("CREATE DATABASE %1 TEMPLATE %2")
                       .arg(quoteIdent(name), quoteIdent(templ))))
        return {};
    return name;
}

bool PgFixture::dropDatabase(const QString &name) {
    return adminExec(
        QStringLiteral("DROP DATABASE IF EXISTS %1 WITH (FORCE)").arg(quoteIdent(name)));
}

QSqlDatabase PgFixture::open(const QString &dbName, const QString &connectionName,
                             const QString &user) {
    const QString name = connectionName.isEmpty() ? nextName("pgfixture") : connectionName;
    if (QSqlDatabase::contains(name))
        close(name);
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
    m_connections.append(name);
    db.setHostName(m_cluster.socketDirectory());
    db.setPort(m_cluster.port());
    db.setDatabaseName(dbName);
    db.setUserName(user.isEmpty() ? m_cluster.superuser() : user);
    db.setConnectOptions(QStringLiteral("connect_timeout=10"));
    if (!db.open())
        qWarning().noquote() << "PgFixture: could not open database" << dbName << "-"
                             << db.lastError().text();
    return db;
}

void PgFixture::close(const QString &connectionName) {
    if (QSqlDatabase::contains(connectionName)) {
        QSqlDatabase::database(connectionName, false).close();
        QSqlDatabase::removeDatabase(connectionName);
    }
    m_connections.removeAll(connectionName);
}

QString sqlScalar(QSqlDatabase db, const QString &sql, const QVariantList &values) {
    QSqlQuery query(db);
    if (!runQuery(query, sql, values))
        return {};
    if (!query.next()) {
        qWarning().noquote() << "SQL returned no row:" << sql;
        return {};
    }
    return query.value(0).toString();
}

QStringList sqlColumn(QSqlDatabase db, const QString &sql, const QVariantList &values) {
    QSqlQuery query(db);
    if (!runQuery(query, sql, values))
        return {};
    QStringList column;
    while (query.next())
        column << query.value(0).toString();
    return column;
}

bool sqlExec(QSqlDatabase db, const QString &sql, const QVariantList &values) {
    QSqlQuery query(db);
    return runQuery(query, sql, values);
}

namespace {

core::Result<void> migrateWith(const QString &connInfo, bool withRoles,
                               bool aggregateOrder = false) {
    const auto info = core::ConnInfo::parse(connInfo);
    if (!info)
        return info.error();
    const QString name = store::uniqueConnectionName(QStringLiteral("template-migrate"));
    core::Result<void> outcome;
    {
        auto db = store::openDatabase(info.value(), name);
        if (!db)
            return db.error();
        store::Migrator migrator(db.value());
        if (auto migrated = migrator.migrate(withRoles); !migrated)
            outcome = migrated.error();
        else if (auto ordered =
                     aggregateOrder ? migrator.enableAggregateOrder() : core::Result<bool>(false);
                 !ordered)
            outcome = ordered.error();
    }
    store::closeDatabase(name);
    return outcome;
}

} // namespace

core::Result<void> migrateSchema(const QString &connInfo) {
    return migrateWith(connInfo, false);
}

core::Result<void> migrateSchemaWithRoles(const QString &connInfo) {
    return migrateWith(connInfo, true);
}

core::Result<void> migrateSchemaWithAggregateOrder(const QString &connInfo) {
    return migrateWith(connInfo, false, true);
}

QSqlDatabase PgFixture::openFreshMigrated(QString &dbName) {
    dbName = freshMigratedDatabase();
    return dbName.isEmpty() ? QSqlDatabase() : open(dbName);
}

void PgFixture::closeAndDrop(QSqlDatabase &db, const QString &dbName) {
    const QString connection = db.connectionName();
    db = QSqlDatabase();
    close(connection);
    if (isStarted() && !dbName.isEmpty())
        dropDatabase(dbName);
}

} // namespace outbox::testing
