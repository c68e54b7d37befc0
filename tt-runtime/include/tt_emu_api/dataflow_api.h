// Old include path of the data-movement API.
#pragma once
#include "api/dataflow/dataflow_api.h"
