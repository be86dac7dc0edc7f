#include "console/widgets/application.h"
#include "core/localtimezone.h"

int main(int argc, char *argv[]) {
    outbox::core::pinLocalTimeZone();
    return outbox::console::runApplication(argc, argv);
}
