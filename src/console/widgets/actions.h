#pragma once

#include "core/event.h"
#include "store/eventfilter.h"
#include "store/operations.h"
#include "store/queries.h"

#include <QHash>
#include <QObject>
#include <QPointer>

#include <functional>
#include <optional>

class QAction;
class QMenu;
class QWidget;

class QMessageBox;

namespace outbox::console {

class BulkJob;
class ConsoleSettings;
class StoreClient;

// Why the console may not change events (`actions`) or run its dispatcher
// (`dispatch`); empty when it may. From the --read-only flag and the role's
// privileges (unknown until the server answered: no restriction yet).
struct ReadOnlyReasons {
    QString actions;
    QString dispatch;
};
ReadOnlyReasons readOnlyReasons(bool readOnlyFlag,
                                const std::optional<store::Privileges> &privileges,
                                const QString &user);

// The operator actions: on the selected rows (retry now, requeue, cancel,
// replay, purge, copy id, copy payload, export JSON lines) and on every
// event matching the filter (through BulkDialog), plus purge-by-age. Every
// change goes through StoreClient::startBulk (OperatorStore: guarded by the
// expected state, batched, audited). Owns the QActions; the window puts
// them in menus and toolbars.
class ActionController final : public QObject {
    Q_OBJECT

public:
    enum Kind {
        RetrySelected,
        RequeueSelected,
        CancelSelected,
        ReplaySelected,
        PurgeSelected,
        CopyId,
        CopyPayload,
        ExportJson,
        RetryMatching,
        RequeueMatching,
        CancelMatching,
        ReplayMatching,
        PurgeMatching,
        PurgeOld,
        KindCount
    };

    ActionController(ConsoleSettings *settings, QWidget *dialogParent);
    ~ActionController() override;
    Q_DISABLE_COPY_MOVE(ActionController)

    void setClient(StoreClient *client);
    void setSelectionProvider(std::function<QList<core::OutboxEvent>()> provider);
    void setFilterProvider(std::function<store::EventFilter()> provider);

    // Disables every action that changes events; `reason` becomes their
    // tooltip ("Read-only: ...").
    void setReadOnly(bool readOnly, const QString &reason);
    bool isReadOnly() const { return m_readOnly; }
    void setConnected(bool connected);

    QAction *action(Kind kind) const { return m_actions.value(kind); }
    // An action on every matching event that lives elsewhere (the export of
    // the jobs panel): listed with the others in the Actions menu.
    void addMatchingAction(QAction *action);
    // The filter of the page on show.
    store::EventFilter currentFilter() const;
    // Context menu for the table.
    void fillContextMenu(QMenu *menu) const;
    void fillActionsMenu(QMenu *menu) const;

    // Re-evaluates what the selection allows; call on selection changes.
    void updateState();

Q_SIGNALS:
    void message(const QString &text);
    // An action changed (or may have changed) events: views should refresh.
    void eventsChanged();
    // A bulk action on the matching events was confirmed and runs in the
    // background; it belongs to the client.
    void bulkStarted(outbox::console::BulkJob *job, const QString &title);
    void clientChanged(outbox::console::StoreClient *client);

private:
    void runOnSelection(store::Action action);
    void confirmReplay(const store::EventFilter &filter, const QString &question);
    void startSelectionJob(store::Action action, const store::EventFilter &filter,
                           const store::BulkOptions &options);
    void watchFailure(BulkJob *job, store::Action action);
    void runOnFilter(store::Action action);
    void openPurgeDialog();
    void openBulkDialog(store::Action action, const store::EventFilter &filter,
                        std::optional<store::BulkSeal> seal = std::nullopt);
    void copyIds();
    void copyPayloads();
    void exportJsonLines();
    QAction *make(Kind kind, const QString &text, const QString &icon, const QString &tip);
    QList<core::OutboxEvent> selection() const;
    // A Yes/Cancel question (Cancel the default), deleted when closed.
    QMessageBox *question(const QString &title, const QString &text) const;
    // Opens `box` without waiting for it; `onYes` runs when Yes is clicked,
    // unless this controller is gone by then.
    void askThen(QMessageBox *box, std::function<void()> onYes);
    void selectionActionDone(store::Action action, qint64 requested,
                             const store::BulkResult &result);

    ConsoleSettings *m_settings;
    QWidget *m_parent;
    QPointer<StoreClient> m_client;
    std::function<QList<core::OutboxEvent>()> m_selection;
    std::function<store::EventFilter()> m_filter;
    QHash<int, QAction *> m_actions;
    QHash<int, QString> m_tips;
    QList<QAction *> m_extraMatching;
    bool m_readOnly = false;
    QString m_readOnlyReason;
    bool m_connected = false;
    int m_running = 0; // selection actions in flight
};

} // namespace outbox::console
