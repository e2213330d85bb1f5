import ArgumentParser
import ModelCastCore

extension DownloadPolicy: @retroactive ExpressibleByArgument {}

/// `--variant`, `--requires`, `--default-variant` and `--download`: a model's variants and
/// download policy for the simple case (a config file says the same per model).
struct VariantOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A variant of the model named by --name: VARIANT=PATH (repeatable, most preferred first; each takes --version). A device takes the first variant whose requirements it meets.", valueName: "VARIANT=PATH"))
    var variant: [String] = []

    @Option(help: ArgumentHelp("A requirement of a variant (repeatable): min_memory=6GiB, platforms=ios:17.0,macos:14.0, accelerators=neural-engine|gpu, architectures=arm64, capabilities=NAME,…", valueName: "VARIANT:KEY=VALUE"))
    var requires: [String] = []

    @Option(help: ArgumentHelp("The variant clients that do not know variants install (default: the last, the least demanding).", valueName: "VARIANT"))
    var defaultVariant: String?

    @Option(help: ArgumentHelp("When devices download the models given on the command line: essential (before first use), prefetch (in the background after launch) or on-demand (when the app asks); default: the app decides.", valueName: "POLICY"))
    var download: DownloadPolicy?

    @Flag(help: "A model's interface (inputs, outputs, classes, vocabulary, tokenizer, chat template) differs from the live version's on purpose. Without it such a publish is refused; with it, --min-app-version must rise above the live release's.")
    var interfaceChange = false

    func apply(to commandLine: inout PublishCommandLine) {
        commandLine.options.interfaceChange = interfaceChange
        commandLine.variants = variant
        commandLine.requires = requires
        commandLine.defaultVariant = defaultVariant
        commandLine.download = download
    }
}
