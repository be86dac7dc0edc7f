#include "console/widgets/actions.h"

#include "console/model/bulkjob.h"
#include "console/model/consolesettings.h"
#include "console/model/consoletypes.h"
#include "console/model/databasesettings.h"
#include "console/model/exportjob.h"
#include "console/model/storeclient.h"
#include "console/widgets/bulkdialog.h"
#include "console/widgets/jsonhighlighter.h"
#include "console/widgets/purgedialog.h"
#include "core/outputfile.h"
#include "core/uuidtext.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QFile>
#include <QFileDialog>
#include <QIcon>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMessageBox>
#include <QSet>

namespace outbox::console {

namespace {

// What each action says: its text, icon and tooltip.
struct ActionText {
    ActionController::Kind kind;
    const char *text;
    const char *icon; // resources/icons/<icon>.svg
    const char *tip;
};
constexpr ActionText kActionTexts[] = {
    {ActionController::RetrySelected, QT_TRANSLATE_NOOP("ActionController", "&Retry now"), "retry",
     QT_TRANSLATE_NOOP("ActionController",
                       "Make the selected pending events due now, skipping their backoff")},
    {ActionController::RequeueSelected, QT_TRANSLATE_NOOP("ActionController", "Re&queue"),
     "requeue",
     QT_TRANSLATE_NOOP("ActionController",
                       "Send the selected dead events back to pending with attempts reset")},
    {ActionController::CancelSelected, QT_TRANSLATE_NOOP("ActionController", "&Cancel"), "cancel",
     QT_TRANSLATE_NOOP(
         "ActionController",
         "Mark the selected pending or dead events dead so they are never delivered")},
    {ActionController::ReplaySelected, QT_TRANSLATE_NOOP("ActionController", "Re&play"), "replay",
     QT_TRANSLATE_NOOP("ActionController",
                       "Enqueue a new copy of each selected delivered or dead event")},
    {ActionController::PurgeSelected, QT_TRANSLATE_NOOP("ActionController", "P&urge"), "purge",
     QT_TRANSLATE_NOOP("ActionController",
                       "Delete the selected delivered or dead events for good")},
    {ActionController::CopyId, QT_TRANSLATE_NOOP("ActionController", "Copy &ID"), "copy",
     QT_TRANSLATE_NOOP("ActionController", "Copy the ids of the selected events")},
    {ActionController::CopyPayload, QT_TRANSLATE_NOOP("ActionController", "Copy pa&yload"), "copy",
     QT_TRANSLATE_NOOP("ActionController", "Copy the payloads of the selected events")},
    {ActionController::ExportJson, QT_TRANSLATE_NOOP("ActionController", "&Export JSON lines…"),
     "export",
     QT_TRANSLATE_NOOP("ActionController", "Save the selected events, one JSON object per line")},
    {ActionController::RetryMatching, QT_TRANSLATE_NOOP("ActionController", "Retry &all matching…"),
     "retry",
     QT_TRANSLATE_NOOP("ActionController",
                       "Retry now every pending event that matches the filter")},
    {ActionController::RequeueMatching,
     QT_TRANSLATE_NOOP("ActionController", "Re&queue all matching…"), "requeue",
     QT_TRANSLATE_NOOP("ActionController",
                       "Requeue every dead event that matches the filter, with a rate limit")},
    {ActionController::CancelMatching,
     QT_TRANSLATE_NOOP("ActionController", "Cance&l all matching…"), "cancel",
     QT_TRANSLATE_NOOP("ActionController",
                       "Cancel every pending or dead event that matches the filter")},
    {ActionController::ReplayMatching,
     QT_TRANSLATE_NOOP("ActionController", "Repla&y all matching…"), "replay",
     QT_TRANSLATE_NOOP("ActionController",
                       "Replay every delivered or dead event that matches the filter")},
    {ActionController::PurgeMatching, QT_TRANSLATE_NOOP("ActionController", "Purge all &matching…"),
     "purge",
     QT_TRANSLATE_NOOP("ActionController",
                       "Delete every delivered or dead event that matches the filter")},
    {ActionController::PurgeOld, QT_TRANSLATE_NOOP("ActionController", "Purge &old events…"),
     "purge",
     QT_TRANSLATE_NOOP("ActionController",
                       "Delete delivered or dead events older than an age, with a preview")},
};
static_assert(std::size(kActionTexts) == ActionController::KindCount);

QString statesText(store::Action action) {
    QStringList names;
    for (core::Status s : store::allowedStates(action)) {
        names << core::statusName(s);
    }
    return names.join(ActionController::tr(" or "));
}

store::Action actionOf(int kind) {
    switch (kind) {
    case ActionController::RetrySelected:
    case ActionController::RetryMatching:
        return store::Action::RetryNow;
    case ActionController::RequeueSelected:
    case ActionController::RequeueMatching:
        return store::Action::Requeue;
    case ActionController::CancelSelected:
    case ActionController::CancelMatching:
        return store::Action::Cancel;
    case ActionController::ReplaySelected:
    case ActionController::ReplayMatching:
        return store::Action::Replay;
    default:
        return store::Action::Purge;
    }
}

bool isSelectionChange(int kind) {
    return kind >= ActionController::RetrySelected && kind <= ActionController::PurgeSelected;
}

bool isMatchingChange(int kind) {
    return kind >= ActionController::RetryMatching && kind <= ActionController::PurgeOld;
}

// A tooltip that names the action's shortcut, as its menu entry does.
QString withShortcut(const QString &tip, const QAction *action) {
    const QKeySequence key = action->shortcut();
    return key.isEmpty()
               ? tip
               : QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText));
}

// "1 event" / "3 events", with the count formatted for the locale.
QString events(qint64 n) {
    return n == 1 ? ActionController::tr("1 event")
                  : ActionController::tr("%1 events").arg(formatCount(n));
}

} // namespace

ReadOnlyReasons readOnlyReasons(bool readOnlyFlag,
                                const std::optional<store::Privileges> &privileges,
                                const QString &user) {
    const QString role = user.isEmpty() ? ActionController::tr("this user") : user;
    ReadOnlyReasons why;
    if (readOnlyFlag) {
        why.actions = ActionController::tr("the console was started with --read-only");
    } else if (privileges && !privileges->canOperate) {
        why.actions = ActionController::tr("the database role %1 may not change events (grant "
                                           "it outbox_operator)")
                          .arg(role);
    }
    why.dispatch = why.actions;
    if (why.dispatch.isEmpty() && privileges && !privileges->canDispatch) {
        why.dispatch = ActionController::tr("the database role %1 may not dispatch (grant it "
                                            "outbox_dispatcher)")
                           .arg(role);
    }
    return why;
}

ActionController::ActionController(ConsoleSettings *settings, QWidget *dialogParent)
    : QObject(dialogParent)
    , m_settings(settings)
    , m_parent(dialogParent) {
    for (const ActionText &text : kActionTexts) {
        make(text.kind, tr(text.text), QLatin1String(text.icon), tr(text.tip));
    }
    m_actions[CopyId]->setShortcut(QKeySequence::Copy);
    m_actions[CopyPayload]->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    m_actions[ExportJson]->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_actions[RetrySelected]->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    m_actions[RequeueSelected]->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Q));
    m_actions[CancelSelected]->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_X));
    m_actions[ReplaySelected]->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    m_actions[PurgeSelected]->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_Delete));
    for (QAction *a : std::as_const(m_actions)) {
        a->setShortcutContext(Qt::WindowShortcut);
    }

    for (int kind = RetrySelected; kind <= PurgeSelected; ++kind) {
        connect(m_actions[kind], &QAction::triggered, this,
                [this, kind] { runOnSelection(actionOf(kind)); });
    }
    for (int kind = RetryMatching; kind <= PurgeMatching; ++kind) {
        connect(m_actions[kind], &QAction::triggered, this,
                [this, kind] { runOnFilter(actionOf(kind)); });
    }
    connect(m_actions[PurgeOld], &QAction::triggered, this, &ActionController::openPurgeDialog);
    connect(m_actions[CopyId], &QAction::triggered, this, &ActionController::copyIds);
    connect(m_actions[CopyPayload], &QAction::triggered, this, &ActionController::copyPayloads);
    connect(m_actions[ExportJson], &QAction::triggered, this, &ActionController::exportJsonLines);
    updateState();
}

ActionController::~ActionController() = default;

QAction *ActionController::make(Kind kind, const QString &text, const QString &icon,
                                const QString &tip) {
    auto *action = new QAction(QIcon(QStringLiteral(":/icons/%1.svg").arg(icon)), text, this);
    action->setObjectName(QStringLiteral("action%1").arg(int(kind)));
    action->setStatusTip(tip);
    m_actions.insert(kind, action);
    m_tips.insert(kind, tip);
    return action;
}

void ActionController::setClient(StoreClient *client) {
    m_client = client;
    updateState();
    Q_EMIT clientChanged(client);
}

void ActionController::addMatchingAction(QAction *action) {
    m_extraMatching.append(action);
}

store::EventFilter ActionController::currentFilter() const {
    return m_filter ? m_filter() : store::EventFilter();
}

void ActionController::setSelectionProvider(std::function<QList<core::OutboxEvent>()> provider) {
    m_selection = std::move(provider);
    updateState();
}

void ActionController::setFilterProvider(std::function<store::EventFilter()> provider) {
    m_filter = std::move(provider);
    updateState();
}

void ActionController::setReadOnly(bool readOnly, const QString &reason) {
    m_readOnly = readOnly;
    m_readOnlyReason = reason;
    updateState();
}

void ActionController::setConnected(bool connected) {
    m_connected = connected;
    updateState();
}

QList<core::OutboxEvent> ActionController::selection() const {
    return m_selection ? m_selection() : QList<core::OutboxEvent>();
}

void ActionController::updateState() {
    const QList<core::OutboxEvent> selected = selection();
    QSet<core::Status> states;
    for (const auto &e : selected) {
        states.insert(e.status);
    }
    const store::EventFilter filter = m_filter ? m_filter() : store::EventFilter();
    for (auto it = m_actions.cbegin(); it != m_actions.cend(); ++it) {
        const int kind = it.key();
        QAction *action = it.value();
        QString why; // empty = enabled
        if (isSelectionChange(kind) || isMatchingChange(kind)) {
            const store::Action op = actionOf(kind);
            if (m_readOnly) {
                why = tr("Read-only: %1").arg(m_readOnlyReason);
            } else if (!m_connected || !m_client) {
                why = tr("Not connected to a database");
            } else if (isSelectionChange(kind)) {
                const auto allowed = store::allowedStates(op);
                const bool any = std::any_of(allowed.cbegin(), allowed.cend(),
                                             [&](core::Status s) { return states.contains(s); });
                if (!any) {
                    why = tr("Select %1 events to %2")
                              .arg(statesText(op), BulkDialog::verb(op).toLower());
                }
            } else if (kind != PurgeOld && filter.status &&
                       !store::allowedStates(op).contains(*filter.status)) {
                why = tr("%1 applies to %2 events; this page shows %3 events")
                          .arg(BulkDialog::verb(op), statesText(op),
                               core::statusName(*filter.status));
            }
        } else if (selected.isEmpty()) {
            why = tr("Select one or more events first");
        }
        action->setEnabled(why.isEmpty());
        action->setToolTip(withShortcut(why.isEmpty() ? m_tips.value(kind) : why, action));
    }
}

void ActionController::fillContextMenu(QMenu *menu) const {
    for (int kind :
         {RetrySelected, RequeueSelected, CancelSelected, ReplaySelected, PurgeSelected}) {
        menu->addAction(m_actions.value(kind));
    }
    menu->addSeparator();
    for (int kind : {CopyId, CopyPayload, ExportJson}) {
        menu->addAction(m_actions.value(kind));
    }
    // Disabled entries show their reason as a tooltip.
    menu->setToolTipsVisible(true);
}

void ActionController::fillActionsMenu(QMenu *menu) const {
    menu->setToolTipsVisible(true);
    QMenu *selected = menu->addMenu(tr("&Selected events"));
    selected->setToolTipsVisible(true);
    fillContextMenu(selected);
    menu->addSeparator();
    for (int kind :
         {RetryMatching, RequeueMatching, CancelMatching, ReplayMatching, PurgeMatching}) {
        menu->addAction(m_actions.value(kind));
    }
    menu->addActions(m_extraMatching);
    menu->addSeparator();
    menu->addAction(m_actions.value(PurgeOld));
}

QMessageBox *ActionController::question(const QString &title, const QString &text) const {
    auto *box = new QMessageBox(QMessageBox::Question, title, text,
                                QMessageBox::Yes | QMessageBox::Cancel, m_parent);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    return box;
}

void ActionController::askThen(QMessageBox *box, std::function<void()> onYes) {
    // The box is deleted only after finished(); this controller is the
    // context, so an answer that comes after it is gone is dropped.
    connect(box, &QMessageBox::finished, this, [box, onYes = std::move(onYes)] {
        if (box->standardButton(box->clickedButton()) == QMessageBox::Yes) {
            onYes();
        }
    });
    box->open();
}

void ActionController::runOnSelection(store::Action action) {
    if (m_readOnly) {
        Q_EMIT message(tr("Read-only: %1").arg(m_readOnlyReason));
        return;
    }
    if (!m_client) {
        return;
    }
    const auto allowed = store::allowedStates(action);
    QList<QUuid> ids;
    const QList<core::OutboxEvent> selected = selection();
    for (const auto &e : selected) {
        if (allowed.contains(e.status)) {
            ids.append(e.id);
        }
    }
    if (ids.isEmpty()) {
        Q_EMIT message(tr("Nothing to %1: select %2 events.")
                           .arg(BulkDialog::verb(action).toLower(), statesText(action)));
        return;
    }
    QString text = tr("%1 %2?").arg(BulkDialog::verb(action), events(ids.size()));
    text += QLatin1String("\n\n") + BulkDialog::effect(action);
    const qint64 ignored = selected.size() - ids.size();
    if (ignored > 0) {
        text += QLatin1String("\n\n") + tr("%1 of the selection (not %2) will be left alone.")
                                            .arg(events(ignored), statesText(action));
    }
    store::EventFilter filter;
    filter.ids = ids;
    if (action == store::Action::Replay) {
        confirmReplay(filter, text);
        return;
    }
    askThen(question(tr("%1 events").arg(BulkDialog::verb(action)), text), [this, action, filter] {
        store::BulkOptions options;
        options.sampleSize = 0;
        startSelectionJob(action, filter, options);
    });
}

// Replaying an event that was replayed before makes a second copy: the
// database refuses it unless asked. A dry run (in the background) counts
// those in the selection first; the question then names them, and Yes stays
// disabled until the operator ticks "replay those again too". The run is
// sealed to the previewed set.
void ActionController::confirmReplay(const store::EventFilter &filter, const QString &question) {
    store::BulkOptions preview;
    preview.dryRun = true;
    preview.sampleSize = 0;
    BulkJob *job = m_client->startBulk(store::Action::Replay, filter, preview);
    ++m_running;
    connect(job, &BulkJob::finished, this, [this, job, filter, question](const auto &plan) {
        --m_running;
        job->deleteLater();
        QMessageBox *box = this->question(tr("Replay events"), question);
        QCheckBox *again = nullptr;
        if (plan.alreadyReplayed > 0) {
            box->setInformativeText(
                tr("%1 of them were replayed before: replaying makes another copy of each. Tick "
                   "the box to replay them all, or cancel and leave those out of the selection.")
                    .arg(events(plan.alreadyReplayed)));
            again = new QCheckBox(tr("&Replay those %1 again too").arg(plan.alreadyReplayed));
            again->setObjectName(QStringLiteral("replayAgain"));
            box->setCheckBox(again);
            QAbstractButton *yes = box->button(QMessageBox::Yes);
            yes->setEnabled(false);
            connect(again, &QCheckBox::toggled, yes, &QAbstractButton::setEnabled);
        }
        // The box owns the check box and outlives the answer.
        askThen(box, [this, filter, seal = plan.seal, again] {
            store::BulkOptions options;
            options.sampleSize = 0;
            options.seal = seal;
            options.again = again && again->isChecked();
            startSelectionJob(store::Action::Replay, filter, options);
        });
    });
    watchFailure(job, store::Action::Replay);
}

void ActionController::startSelectionJob(store::Action action, const store::EventFilter &filter,
                                         const store::BulkOptions &options) {
    if (!m_client) {
        return; // disconnected while the question was open
    }
    BulkJob *job = m_client->startBulk(action, filter, options);
    ++m_running;
    const qint64 requested = filter.ids.size();
    connect(job, &BulkJob::finished, this, [this, job, action, requested](const auto &result) {
        --m_running;
        job->deleteLater();
        selectionActionDone(action, requested, result);
    });
    watchFailure(job, action);
    Q_EMIT message(tr("%1 %2…").arg(BulkDialog::verb(action), events(requested)));
}

void ActionController::watchFailure(BulkJob *job, store::Action action) {
    connect(job, &BulkJob::failed, this, [this, job, action](const core::Error &error) {
        --m_running;
        job->deleteLater();
        Q_EMIT message(tr("%1 failed: %2").arg(BulkDialog::verb(action), error.message));
        auto *box =
            new QMessageBox(QMessageBox::Warning, tr("%1 failed").arg(BulkDialog::verb(action)),
                            error.message, QMessageBox::Close, m_parent);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        Q_EMIT eventsChanged();
    });
}

void ActionController::selectionActionDone(store::Action action, qint64 requested,
                                           const store::BulkResult &result) {
    Q_EMIT message(actionOutcome(action, result.changed, requested, result.skipped) +
                   QLatin1Char('.'));
    Q_EMIT eventsChanged();
}

void ActionController::runOnFilter(store::Action action) {
    if (m_readOnly || !m_client) {
        Q_EMIT message(m_readOnly ? tr("Read-only: %1").arg(m_readOnlyReason)
                                  : tr("Not connected to a database"));
        return;
    }
    openBulkDialog(action, currentFilter());
}

void ActionController::openBulkDialog(store::Action action, const store::EventFilter &filter,
                                      std::optional<store::BulkSeal> seal) {
    auto *dialog = new BulkDialog(m_client, action, filter, m_parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (seal) {
        dialog->setSeal(*seal);
    }
    // The rate is the database's own: one chosen for the demo never becomes
    // the default of another database.
    const QString key = m_client ? DatabaseSettings::keyFor(m_client->connInfo()) : QString();
    if (BulkDialog::hasRateLimit(action)) {
        dialog->setRate(
            DatabaseSettings(m_settings ? m_settings->qsettings() : nullptr, key).requeueRate());
    }
    connect(dialog, &BulkDialog::jobStarted, this,
            [this, dialog, key](BulkJob *job, const QString &title) {
                const store::Action done = dialog->action();
                if (BulkDialog::hasRateLimit(done)) {
                    DatabaseSettings(m_settings ? m_settings->qsettings() : nullptr, key)
                        .setRequeueRate(dialog->rate());
                }
                connect(job, &BulkJob::finished, this, [this] { Q_EMIT eventsChanged(); });
                connect(job, &BulkJob::failed, this, [this] { Q_EMIT eventsChanged(); });
                Q_EMIT message(tr("%1 started; it runs in the background (Jobs panel).")
                                   .arg(BulkDialog::verb(done)));
                Q_EMIT bulkStarted(job, title);
            });
    dialog->open();
    dialog->begin();
}

void ActionController::openPurgeDialog() {
    if (m_readOnly || !m_client) {
        return;
    }
    auto *dialog = new PurgeDialog(m_client, m_parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    // The purge dialog's preview seals what the confirmation may ask for.
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        openBulkDialog(store::Action::Purge, dialog->filter(), dialog->seal());
    });
    dialog->open();
}

void ActionController::copyIds() {
    QStringList ids;
    const QList<core::OutboxEvent> selected = selection();
    for (const auto &e : selected) {
        ids << core::uuidText(e.id);
    }
    if (ids.isEmpty()) {
        return;
    }
    QApplication::clipboard()->setText(ids.join(QLatin1Char('\n')));
    Q_EMIT message(ids.size() == 1 ? tr("Copied 1 id.") : tr("Copied %1 ids.").arg(ids.size()));
}

void ActionController::copyPayloads() {
    const QList<core::OutboxEvent> selected = selection();
    if (selected.isEmpty()) {
        return;
    }
    QString text;
    if (selected.size() == 1) {
        text = prettyJson(selected.constFirst().payload);
    } else {
        // One payload per line, as stored: pasteable into jq.
        QStringList lines;
        for (const auto &e : selected) {
            lines << QString::fromUtf8(e.payload);
        }
        text = lines.join(QLatin1Char('\n'));
    }
    QApplication::clipboard()->setText(text);
    Q_EMIT message(selected.size() == 1 ? tr("Copied 1 payload.")
                                        : tr("Copied %1 payloads.").arg(selected.size()));
}

void ActionController::exportJsonLines() {
    const QList<core::OutboxEvent> selected = selection();
    if (selected.isEmpty()) {
        return;
    }
    const QString suggested = QStringLiteral("outbox-events.jsonl");
    const QString path =
        QFileDialog::getSaveFileName(m_parent, tr("Export events as JSON lines"), suggested,
                                     tr("JSON lines (*.jsonl *.ndjson);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    // The dialog has asked before replacing a file; links and devices are
    // refused all the same, and the file is readable by its owner only.
    auto file = core::OutputFile::create(path, core::OutputFile::Existing::Replace);
    if (!file) {
        Q_EMIT message(tr("Could not write the export: %1").arg(file.errorMessage()));
        return;
    }
    for (const auto &e : selected) {
        file.value()->device().write(eventJsonLine(e) + '\n');
    }
    if (auto committed = file.value()->commit(); !committed) {
        Q_EMIT message(tr("Could not write the export: %1").arg(committed.errorMessage()));
        return;
    }
    Q_EMIT message(tr("Exported %1 to %2.").arg(events(selected.size()), path));
}

} // namespace outbox::console
