#pragma once

#include "store/eventfilter.h"
#include "store/operations.h"

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
// run). Accepting hands the filter and the preview's seal on; the purge
// itself runs through the bulk dialog, which confirms the count again (never
// more than the preview) and shows progress. Cancel is the default button.
class PurgeDialog final : public QDialog {
    Q_OBJECT

public:
    PurgeDialog(StoreClient *client, QWidget *parent = nullptr);
    ~PurgeDialog() override;
    Q_DISABLE_COPY_MOVE(PurgeDialog)

    // Valid only when the inputs are (the purge button is enabled).
    store::EventFilter filter() const;
    // The preview the purge button states: the bulk dialog confirms no more.
    const store::BulkSeal &seal() const { return m_seal; }

private:
    void schedulePreview();
    void runPreview();

    std::unique_ptr<Ui::PurgeDialog> m_ui;
    QPointer<StoreClient> m_client;
    QPushButton *m_purge;
    QTimer m_debounce;
    QPointer<BulkJob> m_job;
    store::BulkSeal m_seal;
};

} // namespace outbox::console
