package dev.modelcast.client

/**
 * A model version installed on the device ([ModelUpdater.installed]): its name, version,
 * variant, version directory, and `mainFile`, the model itself through the `current` link
 * (`models/NAME/current/<file>`), a path that stays the same across updates. The installer's
 * type, named here so an app needs only this package.
 */
typealias InstalledModel = dev.modelcast.client.install.InstalledModel
