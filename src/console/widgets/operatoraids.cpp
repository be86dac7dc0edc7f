#include "console/widgets/operatoraids.h"

#include "console/model/consolesettings.h"
#include "console/widgets/alertnotifier.h"
#include "console/widgets/dispatchersview.h"
#include "console/widgets/jobscontroller.h"

#include <QMainWindow>

namespace outbox::console {

void installOperatorAids(QMainWindow *window, ActionController *actions,
                         ConsoleSettings *settings) {
    new JobsController(window, actions);
    auto *alerts = new AlertNotifier(window, actions, settings ? settings->qsettings() : nullptr);
    // An open circuit of a routing dispatcher's destination is an alert too.
    if (auto *registry = window->findChild<DispatchersView *>())
        QObject::connect(registry, &DispatchersView::openCircuitsChanged, alerts->monitor(),
                         &AlertMonitor::setOpenCircuits);
}

} // namespace outbox::console
