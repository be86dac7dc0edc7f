#pragma once

class QMainWindow;

namespace outbox::console {

class ActionController;
class ConsoleSettings;

// Adds to the main window what works beside the operator: the background
// jobs (JobsController) and the alerts (AlertNotifier). Call before the
// window builds its menus, so the Jobs dock and "Export all matching…" are
// listed there. Both follow the window's client through ActionController.
void installOperatorAids(QMainWindow *window, ActionController *actions, ConsoleSettings *settings);

} // namespace outbox::console
