#pragma once

#include "store/eventfilter.h"

#include <QDialog>
#include <QPointer>
#include <QTimer>

#include <memory>

class QPushButton;

namespace Ui {
class PurgeDialog;
}

namespace outbox::console {

class BulkJob;
class StoreClient;

// Chooses what to purge: delivered and/or dead events unchanged for longer
// than an age, optionally in one namespace, with a live preview count (a dry
// run). Accepting hands the filter on; the purge itself runs through the
// bulk dialog, which confirms the count again and shows progress.
class PurgeDialog final : public QDialog {
    Q_OBJECT

public:
    PurgeDialog(StoreClient *client, QWidget *parent = nullptr);
    ~PurgeDialog() override;
    Q_DISABLE_COPY_MOVE(PurgeDialog)

    void setAge(const QString &age);
    void setNamespace(const QString &nameSpace);
    // 0 delivered, 1 dead, 2 both
    void setStatusChoice(int choice);

    // Valid only when the inputs are (see problem()).
    store::EventFilter filter() const;
    QString problem() const { return m_problem; }
    // -1 while counting or after an error.
    qint64 previewCount() const { return m_preview; }
    QPushButton *purgeButton() const { return m_purge; }

Q_SIGNALS:
    void previewChanged(qint64 count);

private:
    void schedulePreview();
    void runPreview();

    std::unique_ptr<Ui::PurgeDialog> m_ui;
    QPointer<StoreClient> m_client;
    QPushButton *m_purge;
    QTimer m_debounce;
    QPointer<BulkJob> m_job;
    QString m_problem;
    qint64 m_preview = -1;
};

} // namespace outbox::console
