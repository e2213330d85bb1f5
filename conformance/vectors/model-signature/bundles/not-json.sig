this is not a bundle
