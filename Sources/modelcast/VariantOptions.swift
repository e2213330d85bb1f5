import ArgumentParser
import ModelCastCore

extension DownloadPolicy: @retroactive ExpressibleByArgument {}

/// `--variant`, `--requires`, `--default-variant` and `--download`: a model's variants and
/// download policy for the simple case (a config file says the same per model).
struct VariantOptions: ParsableArguments {
    // Most preferred first: a device takes the first variant whose requirements it meets.
    @Option(help: ArgumentHelp("A variant of the model named by --name (repeatable, most preferred first).", valueName: "VARIANT=PATH"))
    var variant: [String] = []

    // The keys: docs/cli.md#variants.
    @Option(help: ArgumentHelp("A variant's requirement (repeatable), e.g. small:min_memory=6GiB.", valueName: "VARIANT:KEY=VALUE"))
    var requires: [String] = []

    @Option(help: ArgumentHelp("The variant older clients install (default: the last, the least demanding).", valueName: "VARIANT", visibility: .hidden))
    var defaultVariant: String?

    // essential: before first use; prefetch: in the background after launch; on-demand: when the app asks.
    @Option(help: ArgumentHelp("When devices download the models (default: the app decides).", valueName: "POLICY", visibility: .hidden))
    var download: DownloadPolicy?

    // Without it a breaking interface change (inputs, outputs, classes, vocabulary, tokenizer…) is refused; compatible ones need no flag.
    @Flag(help: "The interface differs from the live version's on purpose (--min-app-version must rise).")
    var interfaceChange = false

    // Without it a model whose interface cannot be read is refused when an earlier version's could.
    @Flag(help: "Publish a model whose interface cannot be read though an earlier version's could.")
    var allowUnreadableInterface = false

    func apply(to commandLine: inout PublishCommandLine) {
        commandLine.options.interfaceChange = interfaceChange
        commandLine.options.allowUnreadableInterface = allowUnreadableInterface
        commandLine.variants = variant
        commandLine.requires = requires
        commandLine.defaultVariant = defaultVariant
        commandLine.download = download
    }
}
