#include "console/application.h"

int main(int argc, char *argv[]) {
    return outbox::console::runApplication(argc, argv);
}
