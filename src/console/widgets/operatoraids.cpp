#include "console/widgets/operatoraids.h"

#include "console/model/consolesettings.h"
#include "console/widgets/alertnotifier.h"
#include "console/widgets/jobscontroller.h"

#include <QMainWindow>

namespace outbox::console {

void installOperatorAids(QMainWindow *window, ActionController *actions,
                         ConsoleSettings *settings) {
    new JobsController(window, actions);
    new AlertNotifier(window, actions, settings ? settings->qsettings() : nullptr);
}

} // namespace outbox::console
