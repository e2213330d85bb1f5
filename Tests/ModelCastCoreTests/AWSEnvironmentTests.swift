import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

final class AWSEnvironmentTests: XCTestCase {
    func testCredentialsFromEnvironmentAndSharedFile() throws {
        let scratch = try Scratch()
        let file = try scratch.write("credentials", text: """
            [default]
            aws_access_key_id = AKIADEFAULT
            aws_secret_access_key = default-secret

            [ci]
            aws_access_key_id=AKIACI
            aws_secret_access_key=ci-secret
            aws_session_token = ci-token
            """)
        let fromEnvironment = try AWSEnvironment.credentials(["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "tok"])
        XCTAssertEqual(fromEnvironment, AWSCredentials(accessKeyID: "AKIAENV", secretAccessKey: "env-secret", sessionToken: "tok"))
        XCTAssertEqual(try AWSEnvironment.credentials(["AWS_SHARED_CREDENTIALS_FILE": file]).accessKeyID, "AKIADEFAULT")
        let ci = try AWSEnvironment.credentials(["AWS_SHARED_CREDENTIALS_FILE": file, "AWS_PROFILE": "ci"])
        XCTAssertEqual(ci, AWSCredentials(accessKeyID: "AKIACI", secretAccessKey: "ci-secret", sessionToken: "ci-token"))
        XCTAssertThrowsError(try AWSEnvironment.credentials(["AWS_SHARED_CREDENTIALS_FILE": file, "AWS_PROFILE": "nope"])) { error in
            XCTAssertTrue("\(error)".contains("no credentials for profile 'nope' in \(file)"))
            XCTAssertFalse("\(error)".contains("default-secret") || "\(error)".contains("ci-secret"))
        }
        XCTAssertThrowsError(try AWSEnvironment.credentials(["AWS_ACCESS_KEY_ID": "AKIAX"])) { error in
            XCTAssertEqual("\(error)", "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
        }
    }

    func testRegionAndEndpoint() throws {
        let scratch = try Scratch()
        let config = try scratch.write("config", text: "[default]\nregion = eu-west-1\n[profile ci]\nregion = auto\n")
        XCTAssertEqual(try AWSEnvironment.region("ap-south-1", ["AWS_REGION": "us-west-2"]), "ap-south-1")
        XCTAssertEqual(try AWSEnvironment.region(nil, ["AWS_REGION": "us-west-2", "AWS_CONFIG_FILE": config]), "us-west-2")
        XCTAssertEqual(try AWSEnvironment.region(nil, ["AWS_CONFIG_FILE": config]), "eu-west-1")
        XCTAssertEqual(try AWSEnvironment.region(nil, ["AWS_CONFIG_FILE": config, "AWS_PROFILE": "ci"]), "auto")
        XCTAssertEqual(try AWSEnvironment.region(nil, ["AWS_CONFIG_FILE": "/nonexistent"]), "us-east-1")
        XCTAssertEqual(AWSEnvironment.endpoint(nil, ["AWS_ENDPOINT_URL": "http://a", "AWS_ENDPOINT_URL_S3": "http://b"]), "http://b")
        // CI systems set unset variables to "": empty means unset, so AWS gets its default endpoint.
        XCTAssertNil(AWSEnvironment.endpoint(nil, ["AWS_ENDPOINT_URL": ""]))
        XCTAssertEqual(AWSEnvironment.endpoint(nil, ["AWS_ENDPOINT_URL_S3": "", "AWS_ENDPOINT_URL": "http://a"]), "http://a")
    }

    /// A credentials or config file that is there but cannot be read (a directory, bytes
    /// that are not UTF-8) is an error naming it, not passed over as if there were none:
    /// the credentials or region in it would otherwise be replaced without a word.
    func testSettingsFilesThatCannotBeReadAreNamed() throws {
        let scratch = try Scratch()
        let directory = scratch.at("aws")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let binary = try scratch.write("binary", [0x5b, 0xff, 0xfe, 0x5d, 0x0a])
        // A file of any size was read whole into memory.
        let huge = try scratch.write("huge", Array(repeating: 0x23, count: (1 << 20) + 1))
        for (variable, path, reason) in [("AWS_SHARED_CREDENTIALS_FILE", directory, "a directory, not a file"),
                                         ("AWS_SHARED_CREDENTIALS_FILE", binary, "not UTF-8 text"),
                                         ("AWS_SHARED_CREDENTIALS_FILE", huge, "larger than 1 MiB, the most modelcast reads of an AWS settings file")] {
            XCTAssertThrowsError(try AWSEnvironment.credentials([variable: path]), path) { error in
                XCTAssertEqual(error as? ModelCastError, .unreadable(path: path, reason: reason))
            }
        }
        for (path, reason) in [(directory, "a directory, not a file"), (binary, "not UTF-8 text")] {
            XCTAssertThrowsError(try AWSEnvironment.region(nil, ["AWS_CONFIG_FILE": path]), path) { error in
                XCTAssertEqual(error as? ModelCastError, .unreadable(path: path, reason: reason))
            }
        }
        // No file at all (or a path through a file) is no settings: the defaults apply.
        XCTAssertEqual(try AWSEnvironment.region(nil, ["AWS_CONFIG_FILE": binary + "/config"]), "us-east-1")
        XCTAssertThrowsError(try AWSEnvironment.credentials(["AWS_SHARED_CREDENTIALS_FILE": scratch.at("none")])) { error in
            XCTAssertTrue(error is MissingCredentials, "\(error)")
        }
    }

    func testLocationsAndAddressing() throws {
        let location = try S3Location("s3://my-bucket/prod/models/")
        XCTAssertEqual(location.bucket, "my-bucket")
        XCTAssertEqual(location.prefix, "prod/models")
        XCTAssertEqual(location.objectKey("manifest.json"), "prod/models/manifest.json")
        XCTAssertEqual(try S3Location("s3://bucket").objectKey("a"), "a")
        let refusals = [
            "s3://": "not a valid bucket name", "s3://UPPER": "'UPPER' in s3://UPPER is not a valid bucket name",
            "s3://ab": "'ab' in s3://ab", "https://bucket/x": "'https://bucket/x' is not an s3://bucket/prefix URL",
            "s3://bucket/a/../b": "invalid object key 'a/../b'",
        ]
        for (bad, message) in refusals {
            XCTAssertThrowsError(try S3Location(bad), bad) { XCTAssertTrue("\($0)".contains(message), "\($0)") }
        }
        let aws = try S3Endpoint(endpoint: nil, region: "us-west-2", pathStyle: nil)
        XCTAssertEqual(aws.url, "https://s3.us-west-2.amazonaws.com")
        XCTAssertEqual(aws.address(bucket: "b", key: "k 1").host, "b.s3.us-west-2.amazonaws.com")
        XCTAssertEqual(aws.address(bucket: "b", key: "k 1").path, "/k%201")
        let r2 = try S3Endpoint(endpoint: "https://acct.r2.cloudflarestorage.com/", region: "auto", pathStyle: nil)
        XCTAssertEqual(r2.address(bucket: "b", key: "a/b+c").host, "acct.r2.cloudflarestorage.com")
        XCTAssertEqual(r2.address(bucket: "b", key: "a/b+c").path, "/b/a/b%2Bc")
        XCTAssertThrowsError(try S3Endpoint(endpoint: "ftp://x", region: "us-east-1", pathStyle: nil))
        XCTAssertThrowsError(try S3Endpoint(endpoint: "https://x/path", region: "us-east-1", pathStyle: nil))
        XCTAssertThrowsError(try S3Endpoint(endpoint: nil, region: "us east", pathStyle: nil))
    }

    /// A dotted bucket name cannot be a virtual host under AWS's wildcard certificate:
    /// it is addressed path-style unless the user chose otherwise.
    func testDottedBucketsDefaultToPathStyleOnAWS() throws {
        let environment = ["AWS_REGION": "eu-west-1"]
        func endpoint(_ target: String, pathStyle: Bool? = nil, endpoint url: String? = nil) throws -> S3Endpoint {
            var settings = TargetSettings(target: target)
            settings.pathStyle = pathStyle
            settings.endpoint = url
            return try settings.s3Endpoint(for: S3Location(target), environment: environment)
        }
        let dotted = try endpoint("s3://models.example.com/prod")
        XCTAssertTrue(dotted.pathStyle)
        XCTAssertEqual(dotted.url, "https://s3.eu-west-1.amazonaws.com")
        XCTAssertEqual(dotted.address(bucket: "models.example.com", key: "prod/manifest.json").host, "s3.eu-west-1.amazonaws.com")
        XCTAssertEqual(dotted.address(bucket: "models.example.com", key: "prod/manifest.json").path, "/models.example.com/prod/manifest.json")
        // Without a dot, AWS keeps virtual-host addressing.
        let plain = try endpoint("s3://models-example/prod")
        XCTAssertFalse(plain.pathStyle)
        XCTAssertEqual(plain.address(bucket: "models-example", key: "a").host, "models-example.s3.eu-west-1.amazonaws.com")
        // The user's choice stands, either way.
        XCTAssertFalse(try endpoint("s3://models.example.com/prod", pathStyle: false).pathStyle)
        XCTAssertTrue(try endpoint("s3://models-example", pathStyle: true).pathStyle)
        // Custom endpoints stay path-style by default.
        XCTAssertTrue(try endpoint("s3://models.example.com", endpoint: "http://127.0.0.1:9000").pathStyle)
        XCTAssertFalse(try endpoint("s3://models.example.com", pathStyle: false, endpoint: "http://127.0.0.1:9000").pathStyle)
    }
}
