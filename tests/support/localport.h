#pragma once

#include "devtools/localport.h"

namespace outbox::testing {

using devtools::closedPort;

} // namespace outbox::testing
