#include "console/widgets/application.h"
#include "core/localtimezone.h"
#include "devtools/demo/demosession.h"

// outbox-console-demo: the console with demo mode built in, which
// `outbox-console --demo` and "Start demo" run.
int main(int argc, char *argv[]) {
    outbox::core::pinLocalTimeZone();
    return outbox::console::runApplication(argc, argv, outbox::console::demoFactory());
}
