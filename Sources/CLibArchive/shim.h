#ifndef MODELCAST_CLIBARCHIVE_SHIM_H
#define MODELCAST_CLIBARCHIVE_SHIM_H

#include <archive.h>
#include <archive_entry.h>

#endif
