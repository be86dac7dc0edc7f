#include "console/widgets/connectiondialog.h"

#include "console/model/consolesettings.h"
#include "store/queries.h"
#include "store/session.h"
#include "ui_connectiondialog.h"

#include <QInputDialog>
#include <QMessageBox>
#include <QPushButton>
#include <QtConcurrent>

namespace outbox::console {

namespace {

const QStringList kSslModes{QString(),
                            QStringLiteral("disable"),
                            QStringLiteral("allow"),
                            QStringLiteral("prefer"),
                            QStringLiteral("require"),
                            QStringLiteral("verify-ca"),
                            QStringLiteral("verify-full")};

} // namespace

core::Result<QString> probeConnection(const core::ConnInfo &info) {
    store::Session session(info, {.applicationName = QStringLiteral("outbox-console")});
    core::Result<QString> result = [&]() -> core::Result<QString> {
        if (auto opened = session.open(); !opened) {
            return opened.error();
        }
        store::EventQueries queries(session);
        auto server = queries.serverInfo();
        if (!server) {
            return server.error();
        }
        QString text = QObject::tr("Connected to PostgreSQL %1, database %2 as %3.")
                           .arg(server->version, server->database, server->user);
        auto privileges = queries.privileges();
        if (!privileges) {
            return QString(text + QLatin1Char(' ') + privileges.errorMessage());
        }
        text += QLatin1Char(' ') + QObject::tr("Schema version %1; ").arg(server->schemaVersion);
        if (privileges->canOperate) {
            text += QObject::tr("this role can view and operate.");
        } else if (privileges->canRead) {
            text += QObject::tr("this role can only view (the console will be read-only).");
        } else {
            text += QObject::tr("this role cannot read the outbox.");
        }
        return text;
    }();
    return result;
}

void openConnectionDialogAsync(ConsoleSettings *settings, QWidget *parent,
                               const core::ConnInfo &current,
                               std::function<void(const ConnectionDialog &)> onAccepted) {
    auto *dialog = new ConnectionDialog(settings, parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (!current.host.isEmpty() || !current.dbname.isEmpty()) {
        dialog->setConnInfo(current);
    }
    QObject::connect(dialog, &QDialog::accepted, dialog,
                     [dialog, onAccepted = std::move(onAccepted)] { onAccepted(*dialog); });
    dialog->open();
}

void askPasswordAsync(QWidget *parent, const QString &why, const QString &target,
                      std::function<void(const QString &)> onPassword) {
    auto *dialog = new QInputDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(QObject::tr("Password"));
    dialog->setLabelText(
        QObject::tr("%1\n\nPassword for %2 (kept in memory only):").arg(why, target));
    dialog->setTextEchoMode(QLineEdit::Password);
    QObject::connect(
        dialog, &QInputDialog::textValueSelected, dialog,
        [onPassword = std::move(onPassword)](const QString &password) { onPassword(password); });
    dialog->open();
}

ConnectionDialog::ConnectionDialog(ConsoleSettings *settings, QWidget *parent)
    : QDialog(parent)
    , m_ui(std::make_unique<Ui::ConnectionDialog>())
    , m_settings(settings) {
    m_ui->setupUi(this);
    setObjectName(QStringLiteral("connectionDialog"));
    m_connect = m_ui->buttons->addButton(tr("Connect"), QDialogButtonBox::AcceptRole);
    m_connect->setObjectName(QStringLiteral("connectButton"));
    m_connect->setDefault(true);
    for (const QString &mode : kSslModes) {
        m_ui->sslCombo->addItem(mode.isEmpty() ? tr("default (prefer)") : mode, mode);
    }
    loadProfiles();

    connect(m_ui->buttons, &QDialogButtonBox::accepted, this, &ConnectionDialog::accept);
    connect(m_ui->buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_ui->testButton, &QPushButton::clicked, this, &ConnectionDialog::testConnection);
    connect(m_ui->saveProfileButton, &QPushButton::clicked, this, &ConnectionDialog::saveProfile);
    connect(m_ui->deleteProfileButton, &QPushButton::clicked, this,
            &ConnectionDialog::deleteProfile);
    connect(m_ui->demoButton, &QPushButton::clicked, this, [this] {
        m_demo = true;
        QDialog::accept();
    });
    connect(m_ui->profileCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (m_loading || index <= 0 || !m_settings) {
            m_ui->deleteProfileButton->setEnabled(index > 0);
            return;
        }
        if (const auto p = m_settings->profile(m_ui->profileCombo->itemText(index))) {
            applyProfile(*p);
        }
        m_ui->deleteProfileButton->setEnabled(true);
    });
    connect(&m_watcher, &QFutureWatcher<core::Result<QString>>::finished, this,
            &ConnectionDialog::onTestDone);

    if (m_settings && !m_settings->lastProfile().isEmpty()) {
        selectProfile(m_settings->lastProfile());
    }
    m_ui->deleteProfileButton->setEnabled(m_ui->profileCombo->currentIndex() > 0);
}

ConnectionDialog::~ConnectionDialog() {
    // The probe owns nothing of this dialog; it finishes on its own (bounded
    // by connect_timeout) and its result is dropped.
    m_watcher.disconnect(this);
}

void ConnectionDialog::loadProfiles() {
    m_loading = true;
    const QString current = m_ui->profileCombo->currentText();
    m_ui->profileCombo->clear();
    m_ui->profileCombo->addItem(tr("(none)"));
    if (m_settings) {
        for (const auto &p : m_settings->profiles()) {
            m_ui->profileCombo->addItem(p.name);
        }
    }
    const int index = m_ui->profileCombo->findText(current);
    m_ui->profileCombo->setCurrentIndex(index > 0 ? index : 0);
    m_loading = false;
}

void ConnectionDialog::applyProfile(const ConnectionProfile &p) {
    m_ui->hostEdit->setText(p.host);
    m_ui->portSpin->setValue(p.port);
    m_ui->databaseEdit->setText(p.database);
    m_ui->userEdit->setText(p.user);
    const int ssl = m_ui->sslCombo->findData(p.sslMode);
    m_ui->sslCombo->setCurrentIndex(ssl >= 0 ? ssl : 0);
    m_ui->connInfoEdit->setText(p.connInfo);
    m_ui->traceUrlEdit->setText(p.traceUrlTemplate);
    m_ui->modeTabs->setCurrentWidget(p.connInfo.isEmpty() ? m_ui->fieldsTab : m_ui->stringTab);
    m_ui->testLabel->clear();
}

void ConnectionDialog::selectProfile(const QString &name) {
    const int index = m_ui->profileCombo->findText(name);
    if (index > 0) {
        m_ui->profileCombo->setCurrentIndex(index);
        if (const auto p = m_settings ? m_settings->profile(name) : std::nullopt) {
            applyProfile(*p);
        }
    }
}

void ConnectionDialog::setConnInfo(const core::ConnInfo &info) {
    m_ui->profileCombo->setCurrentIndex(0);
    applyProfile(ConnectionProfile::fromConnInfo(QString(), info));
    m_ui->passwordEdit->setText(info.password);
}

void ConnectionDialog::setMessage(const QString &message) {
    m_ui->testLabel->setText(message);
    m_ui->testLabel->setStyleSheet(QStringLiteral("color: #a01010;"));
}

ConnectionProfile ConnectionDialog::currentAsProfile(const QString &name) const {
    ConnectionProfile p;
    p.name = name;
    p.traceUrlTemplate = m_ui->traceUrlEdit->text().trimmed();
    if (m_ui->modeTabs->currentWidget() == m_ui->stringTab) {
        p.connInfo = m_ui->connInfoEdit->text().trimmed();
        return p;
    }
    p.host = m_ui->hostEdit->text().trimmed();
    p.port = m_ui->portSpin->value();
    p.database = m_ui->databaseEdit->text().trimmed();
    p.user = m_ui->userEdit->text().trimmed();
    p.sslMode = m_ui->sslCombo->currentData().toString();
    return p;
}

core::Result<core::ConnInfo> ConnectionDialog::connInfo() const {
    const ConnectionProfile p = currentAsProfile(QString());
    if (m_ui->modeTabs->currentWidget() == m_ui->stringTab && p.connInfo.isEmpty()) {
        return core::Error{core::ErrorKind::Invalid,
                           tr("The connection string is empty; type one such as "
                              "\"host=localhost dbname=app\" or use the Parameters tab.")};
    }
    auto info = p.toConnInfo();
    if (!info) {
        return core::Error{core::ErrorKind::Invalid,
                           tr("The connection string is not valid: %1").arg(info.errorMessage())};
    }
    if (!m_ui->passwordEdit->text().isEmpty()) {
        info->password = m_ui->passwordEdit->text();
    }
    return info;
}

QString ConnectionDialog::profileName() const {
    return m_ui->profileCombo->currentIndex() > 0 ? m_ui->profileCombo->currentText() : QString();
}

void ConnectionDialog::saveProfile() {
    if (!m_settings) {
        return;
    }
    auto info = connInfo();
    if (!info) {
        setMessage(info.errorMessage());
        return;
    }
    if (const QString problem = traceUrlTemplateProblem(m_ui->traceUrlEdit->text());
        !problem.isEmpty()) {
        setMessage(tr("Not saved: %1.").arg(problem));
        return;
    }
    bool ok = false;
    const QString suggested = profileName().isEmpty()
                                  ? (info->dbname.isEmpty() ? tr("New profile") : info->dbname)
                                  : profileName();
    const QString name = QInputDialog::getText(this, tr("Save profile"), tr("Profile name:"),
                                               QLineEdit::Normal, suggested, &ok)
                             .trimmed();
    if (!ok || name.isEmpty()) {
        return;
    }
    m_settings->saveProfile(currentAsProfile(name));
    loadProfiles();
    m_loading = true;
    m_ui->profileCombo->setCurrentIndex(m_ui->profileCombo->findText(name));
    m_loading = false;
    m_ui->deleteProfileButton->setEnabled(true);
    m_ui->testLabel->setStyleSheet({});
    m_ui->testLabel->setText(tr("Saved profile \"%1\" (without the password).").arg(name));
}

void ConnectionDialog::deleteProfile() {
    const QString name = profileName();
    if (!m_settings || name.isEmpty()) {
        return;
    }
    auto *box = new QMessageBox(QMessageBox::Question, tr("Delete profile"),
                                tr("Delete the connection profile \"%1\"?").arg(name),
                                QMessageBox::Yes | QMessageBox::No, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    // Answered without a nested event loop; the dialog is the context.
    connect(box, &QMessageBox::finished, this, [this, box, name] {
        if (box->standardButton(box->clickedButton()) == QMessageBox::Yes && m_settings) {
            m_settings->removeProfile(name);
            loadProfiles();
        }
    });
    box->open();
}

void ConnectionDialog::testConnection() {
    auto info = connInfo();
    if (!info) {
        setMessage(info.errorMessage());
        Q_EMIT testFinished(false, info.errorMessage());
        return;
    }
    if (m_watcher.isRunning()) {
        return;
    }
    m_ui->testButton->setEnabled(false);
    m_ui->testLabel->setStyleSheet({});
    m_ui->testLabel->setText(tr("Testing %1…").arg(info->redacted()));
    m_watcher.setFuture(QtConcurrent::run(probeConnection, info.value()));
}

void ConnectionDialog::onTestDone() {
    m_ui->testButton->setEnabled(true);
    const core::Result<QString> result = m_watcher.result();
    if (result) {
        m_ui->testLabel->setStyleSheet(QStringLiteral("color: #1d6b18;"));
        m_ui->testLabel->setText(result.value());
        Q_EMIT testFinished(true, result.value());
    } else {
        setMessage(result.errorMessage());
        Q_EMIT testFinished(false, result.errorMessage());
    }
}

void ConnectionDialog::accept() {
    auto info = connInfo();
    if (!info) {
        setMessage(info.errorMessage());
        return;
    }
    if (m_settings) {
        m_settings->setLastProfile(profileName());
    }
    QDialog::accept();
}

} // namespace outbox::console
