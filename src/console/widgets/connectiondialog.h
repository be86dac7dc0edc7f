#pragma once

#include "core/conninfo.h"
#include "core/result.h"

#include <QDialog>
#include <QFutureWatcher>

#include <functional>
#include <memory>

class QPushButton;

namespace Ui {
class ConnectionDialog;
}

namespace outbox::console {

class ConsoleSettings;
struct ConnectionProfile;

// Probes a connection the way the console will use it: connects, reads the
// server version, the schema version and the role's privileges. Blocking:
// run it off the GUI thread (testConnection() does).
core::Result<QString> probeConnection(const core::ConnInfo &info);

class ConnectionDialog;

// Opens the connection dialog without blocking (prefilled with `current`
// when it names a database) and calls `onAccepted` if the user connects.
void openConnectionDialogAsync(ConsoleSettings *settings, QWidget *parent,
                               const core::ConnInfo &current,
                               std::function<void(const ConnectionDialog &)> onAccepted);
// Asks for a password without blocking; it goes to `onPassword` and is
// never stored.
void askPasswordAsync(QWidget *parent, const QString &why, const QString &target,
                      std::function<void(const QString &)> onPassword);

// Chooses a database: a saved profile (host, port, database, user, SSL
// mode, or a conninfo/URI) or typed settings, with a password kept in
// memory only, and an asynchronous "Test connection". Also offers the demo.
class ConnectionDialog final : public QDialog {
    Q_OBJECT

public:
    ConnectionDialog(ConsoleSettings *settings, QWidget *parent = nullptr);
    ~ConnectionDialog() override;
    Q_DISABLE_COPY_MOVE(ConnectionDialog)

    // What to connect to, with the password (if any) typed here.
    core::Result<core::ConnInfo> connInfo() const;
    // The profile chosen (empty when the settings were typed in).
    QString profileName() const;
    bool demoRequested() const { return m_demo; }

    void setConnInfo(const core::ConnInfo &info);

    void testConnection();
    bool isTesting() const { return m_watcher.isRunning(); }

Q_SIGNALS:
    void testFinished(bool ok, const QString &message);

protected:
    void accept() override;

private:
    void selectProfile(const QString &name);
    void setMessage(const QString &message); // e.g. why the last connection failed
    void loadProfiles();
    void applyProfile(const ConnectionProfile &profile);
    ConnectionProfile currentAsProfile(const QString &name) const;
    void saveProfile();
    void deleteProfile();
    void onTestDone();

    std::unique_ptr<Ui::ConnectionDialog> m_ui;
    ConsoleSettings *m_settings;
    QPushButton *m_connect;
    QFutureWatcher<core::Result<QString>> m_watcher;
    bool m_demo = false;
    bool m_loading = false;
};

} // namespace outbox::console
